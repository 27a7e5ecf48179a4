// cxx-tests — a small C++ test binary shaped like a user's gtest build (its own code, no
// test framework): named tests "Suite.Name", selected with --filter=PATTERNS (':'-separated
// globs with '*' and '?'; a leading '-' part excludes), listed with --list. Each test
// prints "[ RUN      ] name" and "[       OK ] name"; a failed check aborts (SIGABRT), as
// a gtest ASSERT in a death-free build would end the process under jinx.
//
//   Counter.Mutex   4 std::threads add under a std::mutex: correct
//   Queue.CondVar   producer/consumer over std::condition_variable: correct
//   Circle.Area     the Circle class with a std::mutex: SetRadius then UpdateCircumference
//                   in two critical sections in one thread, GetArea checking the area
//                   against the circumference in another: an atomicity violation,
//                   found by jinx's rounds (natively very rare)
//
// usage: cxx-tests [--filter=PATTERNS] [--list] [--calls=N]
#include <atomic>
#include <cassert>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

long g_calls = 12;
volatile unsigned long g_sink;

// Private, register-only work between calls (the window stays narrow natively).
unsigned long work(unsigned long acc, unsigned long units)
{
    for (unsigned long i = 0; i < units; i++)
        acc = acc * 6364136223846793005UL + 1442695040888963407UL;
    return acc;
}

bool glob(const char *p, const char *s)
{
    if (!*p)
        return !*s;
    if (*p == '*')
        return glob(p + 1, s) || (*s && glob(p, s + 1));
    return *s && (*p == '?' || *p == *s) && glob(p + 1, s + 1);
}

// gtest's filter language, reduced: POSITIVE[:POSITIVE...][-NEGATIVE[:NEGATIVE...]]
bool selected(const std::string &filter, const std::string &name)
{
    std::string pos = filter, neg;
    size_t dash = filter.find('-');
    if (dash != std::string::npos) {
        pos = filter.substr(0, dash);
        neg = filter.substr(dash + 1);
    }
    auto any = [&](const std::string &list) {
        size_t b = 0;
        while (b <= list.size()) {
            size_t e = list.find(':', b);
            std::string one = list.substr(b, e == std::string::npos ? std::string::npos : e - b);
            if (!one.empty() && glob(one.c_str(), name.c_str()))
                return true;
            if (e == std::string::npos)
                break;
            b = e + 1;
        }
        return false;
    };
    return (pos.empty() || any(pos)) && !any(neg);
}

void counter_mutex()
{
    std::mutex m;
    long n = 0;
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; i++)
        ts.emplace_back([&] {
            for (int k = 0; k < 2000; k++) {
                std::lock_guard<std::mutex> g(m);
                n++;
            }
        });
    for (auto &t : ts)
        t.join();
    assert(n == 8000);
}

void queue_condvar()
{
    std::mutex m;
    std::condition_variable cv;
    std::deque<int> q;
    long sum = 0;
    std::thread consumer([&] {
        for (int got = 0; got < 500; got++) {
            std::unique_lock<std::mutex> l(m);
            cv.wait(l, [&] { return !q.empty(); });
            sum += q.front();
            q.pop_front();
        }
    });
    for (int i = 1; i <= 500; i++) {
        std::lock_guard<std::mutex> g(m);
        q.push_back(i);
        cv.notify_one();
    }
    consumer.join();
    assert(sum == 500L * 501 / 2);
}

// Integers scaled by 113 with pi ~ 355/113: circumference = 710 r, area = 355 r^2.
class Circle {
  public:
    void SetRadius(long r)
    {
        {
            std::lock_guard<std::mutex> g(m_);
            radius_ = r;
        }
        UpdateCircumference(); // BUG: not in the same critical section
    }
    long GetArea()
    {
        std::lock_guard<std::mutex> g(m_);
        long area = 355 * radius_ * radius_;
        assert(circumference_ * circumference_ == 4 * 355 * area);
        return area;
    }

  private:
    void UpdateCircumference()
    {
        std::lock_guard<std::mutex> g(m_);
        circumference_ = 710 * radius_;
    }
    std::mutex m_;
    long radius_ = 1, circumference_ = 710;
};

void circle_area()
{
    Circle c;
    std::atomic<bool> go{false};
    std::thread writer([&] {
        while (!go.load())
            std::this_thread::yield();
        unsigned long acc = 1;
        for (long i = 0; i < g_calls; i++) {
            acc = work(acc, 12000);
            c.SetRadius(2 + i % 1000);
        }
        g_sink = acc;
    });
    std::thread reader([&] {
        while (!go.load())
            std::this_thread::yield();
        unsigned long acc = 3;
        for (long i = 0; i < g_calls; i++) {
            acc = work(acc, 12000);
            c.GetArea();
        }
        g_sink = acc;
    });
    go.store(true);
    writer.join();
    reader.join();
}

struct Test {
    const char *name;
    void (*fn)();
};
const Test tests[] = {
    {"Counter.Mutex", counter_mutex},
    {"Queue.CondVar", queue_condvar},
    {"Circle.Area", circle_area},
};

} // namespace

int main(int argc, char **argv)
{
    std::string filter;
    bool list = false;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--filter=", 9))
            filter = argv[i] + 9;
        else if (!strcmp(argv[i], "--list"))
            list = true;
        else if (!strncmp(argv[i], "--calls=", 8))
            g_calls = atol(argv[i] + 8);
        else {
            fprintf(stderr, "usage: cxx-tests [--filter=PATTERNS] [--list] [--calls=N]\n");
            return 2;
        }
    }
    int ran = 0;
    for (const Test &t : tests) {
        if (!selected(filter, t.name))
            continue;
        if (list) {
            printf("%s\n", t.name);
            continue;
        }
        printf("[ RUN      ] %s\n", t.name);
        fflush(stdout);
        t.fn();
        printf("[       OK ] %s\n", t.name);
        ran++;
    }
    if (!list)
        printf("[  PASSED  ] %d tests.\n", ran);
    return 0;
}

// Shared parts of the C++ workloads (images/src/cxx-*.cpp): a bounded FIFO work queue
// and a fixed thread pool draining it, written with the C++17 standard library only
// (std::thread, std::mutex, std::condition_variable, std::atomic, std::function), as a
// C++ program under test would be. Built with g++ -static -pthread against glibc and
// libstdc++, these images bring what musl C programs rarely do: vectorised glibc string
// functions, SSE struct copies and zeroing emitted by g++, libstdc++'s condition
// variables on glibc's futex protocol.
//
// WIDEN(ms): nothing in the normal build; with -DWIDEN_WINDOW a sleep, to widen a bug's
// window (the images/bin/widen/ builds).
#ifndef JINX_IMAGES_CXXPOOL_H
#define JINX_IMAGES_CXXPOOL_H

#undef NDEBUG
#include <atomic>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#ifdef WIDEN_WINDOW
#define WIDEN(ms) std::this_thread::sleep_for(std::chrono::milliseconds(ms))
#else
#define WIDEN(ms) ((void)0)
#endif

namespace jinx_images {

// argv[i] as a positive number, or def when absent; a bad value prints usage, exit 2.
inline long arg_long(int argc, char **argv, int i, long def, const char *usage)
{
    if (i >= argc)
        return def;
    char *end = nullptr;
    long v = std::strtol(argv[i], &end, 0);
    if (end == argv[i] || *end || v <= 0) {
        std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        std::exit(2);
    }
    return v;
}

// A task's private computation: a register-only integer hash (no memory traffic, so no
// cue points under Jinx), deterministic in its inputs so that main can check results.
inline uint64_t mix(uint64_t x, unsigned long rounds)
{
    for (unsigned long i = 0; i < rounds; i++) {
        x ^= x >> 31;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 29;
        asm volatile("" : "+r"(x));
    }
    return x;
}

// What a task produces. Its constructor zeroes it: g++ -O2 writes the 40 bytes with SSE
// stores (pxor, movups, and movq %xmm0 for the tail) wherever one is made, including in
// vectors that several threads touch.
struct Summary {
    uint64_t hash;
    uint64_t steps;
    uint32_t task;
    uint32_t worker;
    uint64_t check;
    uint64_t batch;
    Summary() : hash(), steps(), task(), worker(), check(), batch() {}
};

// Bounded FIFO: push blocks while full, pop while empty; close() wakes everyone, after
// which push refuses and pop drains what is left.
template <typename T> class BoundedQueue {
public:
    explicit BoundedQueue(size_t cap) : cap_(cap) {}
    BoundedQueue(const BoundedQueue &) = delete;
    BoundedQueue &operator=(const BoundedQueue &) = delete;

    bool push(T item)
    {
        std::unique_lock<std::mutex> lk(m_);
        not_full_.wait(lk, [this] { return closed_ || q_.size() < cap_; });
        if (closed_)
            return false;
        q_.push_back(std::move(item));
        lk.unlock();
        not_empty_.notify_one();
        return true;
    }

    bool pop(T &out)
    {
        std::unique_lock<std::mutex> lk(m_);
        not_empty_.wait(lk, [this] { return closed_ || !q_.empty(); });
        if (q_.empty())
            return false;
        out = std::move(q_.front());
        q_.pop_front();
        lk.unlock();
        not_full_.notify_one();
        return true;
    }

    void close()
    {
        {
            std::lock_guard<std::mutex> lk(m_);
            closed_ = true;
        }
        not_full_.notify_all();
        not_empty_.notify_all();
    }

private:
    std::mutex m_;
    std::condition_variable not_full_, not_empty_;
    std::deque<T> q_;
    size_t cap_;
    bool closed_ = false;
};

// A fixed pool of workers taking std::function tasks from a bounded queue. wait_idle()
// returns once every submitted task has finished.
class ThreadPool {
public:
    ThreadPool(unsigned workers, size_t queue_cap) : queue_(queue_cap)
    {
        for (unsigned i = 0; i < workers; i++)
            threads_.emplace_back([this, i] { run(i + 1); });
    }
    ThreadPool(const ThreadPool &) = delete;
    ThreadPool &operator=(const ThreadPool &) = delete;
    ~ThreadPool() { shutdown(); }

    void submit(std::function<void(unsigned)> task)
    {
        {
            std::lock_guard<std::mutex> lk(idle_m_);
            pending_++;
        }
        bool ok = queue_.push(std::move(task));
        assert(ok);
    }

    void wait_idle()
    {
        std::unique_lock<std::mutex> lk(idle_m_);
        idle_cv_.wait(lk, [this] { return pending_ == 0; });
    }

    void shutdown()
    {
        queue_.close();
        for (auto &t : threads_)
            if (t.joinable())
                t.join();
    }

    unsigned long executed() const { return executed_.load(); }

private:
    void run(unsigned worker)
    {
        std::function<void(unsigned)> task;
        while (queue_.pop(task)) {
            task(worker);
            executed_.fetch_add(1);
            std::lock_guard<std::mutex> lk(idle_m_);
            if (--pending_ == 0)
                idle_cv_.notify_all();
        }
    }

    BoundedQueue<std::function<void(unsigned)>> queue_;
    std::vector<std::thread> threads_;
    std::mutex idle_m_;
    std::condition_variable idle_cv_;
    unsigned long pending_ = 0;
    std::atomic<unsigned long> executed_{0};
};

// How long task t of batch b computes: between work/2 and 3*work/2 rounds, so that the
// workers do not finish their tasks in lockstep.
inline unsigned long task_rounds(unsigned b, unsigned t, unsigned long work)
{
    return work / 2 + mix((uint64_t)b << 32 | t, 4) % (work + 1);
}

// The value task t of batch b must produce.
inline uint64_t expected_hash(unsigned b, unsigned t, unsigned long work)
{
    return mix(0x9e3779b97f4a7c15ULL ^ ((uint64_t)b << 32 | t), task_rounds(b, t, work));
}

} // namespace jinx_images

#endif

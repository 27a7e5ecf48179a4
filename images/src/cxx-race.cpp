// cxx-race — the buggy twin of cxx-pool: the same C++17 thread pool and bounded queue,
// but the workers append their results to a completion log whose tail index is a
// std::atomic read and then written (check-then-act) instead of claimed with fetch_add.
//
//   worker, per task:  slot = tail.load()           (a1: check)
//                      log[slot] = summary          (a 40-byte struct copy, SSE stores)
//                      tail.store(slot + 1)         (a2: act)
//
// The bug: another worker's a1..a2 between one worker's a1 and a2 reads the same slot;
// one of the two results is overwritten and the tail ends short. main asserts, after
// each batch, that the log holds every task exactly once (SIGABRT in thread 1). Each
// access is atomic on its own; only the pair is not.
//
// usage: cxx-race [tasks [batches [workers [work]]]]   (defaults 16 3 3 100000)
#include "cxxpool.h"

using namespace jinx_images;

int main(int argc, char **argv)
{
    const char *usage = "[tasks [batches [workers [work]]]]";
    unsigned tasks = (unsigned)arg_long(argc, argv, 1, 16, usage);
    unsigned batches = (unsigned)arg_long(argc, argv, 2, 3, usage);
    unsigned workers = (unsigned)arg_long(argc, argv, 3, 3, usage);
    unsigned long work = (unsigned long)arg_long(argc, argv, 4, 100000, usage);

    std::vector<Summary> log(tasks);              // zeroed by Summary's constructor
    std::vector<std::atomic<int>> runs(tasks);
    std::atomic<size_t> tail{0};
    ThreadPool pool(workers, 8);

    for (unsigned b = 0; b < batches; b++) {
        for (auto &r : runs)
            r.store(0);
        tail.store(0);
        for (unsigned t = 0; t < tasks; t++) {
            pool.submit([&, b, t](unsigned worker) {
                runs[t].fetch_add(1);
                Summary s;
                s.hash = expected_hash(b, t, work);
                s.steps = task_rounds(b, t, work);
                s.task = t;
                s.worker = worker;
                s.check = s.hash ^ t;
                s.batch = b;
                size_t slot = tail.load(); // a1: check
                assert(slot < tasks);
                WIDEN(2);
                log[slot] = s;
                tail.store(slot + 1);      // a2: act (BUG: not one atomic claim)
            });
        }
        pool.wait_idle();

        std::vector<int> seen(tasks, 0);
        size_t n = tail.load();
        for (size_t i = 0; i < n && i < tasks; i++)
            if (log[i].batch == b && log[i].task < tasks)
                seen[log[i].task]++;
        for (unsigned t = 0; t < tasks; t++) {
            assert(runs[t].load() == 1);
            assert(seen[t] == 1); // fails when two workers took the same slot
        }
        assert(n == tasks);
        for (size_t i = 0; i < tasks; i++) {
            const Summary &s = log[i];
            assert(s.hash == expected_hash(b, s.task, work) && s.check == (s.hash ^ s.task));
        }
        log.assign(tasks, Summary());
    }
    pool.shutdown();
    std::printf("cxx-race: %u batches of %u tasks on %u workers, all results logged once\n", batches, tasks, workers);
    return 0;
}

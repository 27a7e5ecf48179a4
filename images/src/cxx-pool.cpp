// cxx-pool — a C++17 thread pool draining a bounded work queue, written correctly: the
// bug-free C++ workload (its twin cxx-race has a bug).
//
//   main:    submits `batches` batches of `tasks` tasks to a pool of `workers` threads
//            through a queue of 8 slots (so main blocks on a full queue), waits for each
//            batch (condition variable with a predicate), then checks every result.
//   workers: each task computes a hash privately and stores its Summary (a 40-byte
//            struct zeroed in its constructor: SSE stores) into the shared results
//            vector at its own index, and publishes it by claiming the next slot of the
//            completion log with fetch_add (an atomic claim).
//   main asserts: every task ran once (atomic counters), every result is right, the
//   completion log holds every task exactly once.
//
// usage: cxx-pool [tasks [batches [workers [work]]]]   (defaults 16 3 3 100000)
#include "cxxpool.h"

using namespace jinx_images;

int main(int argc, char **argv)
{
    const char *usage = "[tasks [batches [workers [work]]]]";
    unsigned tasks = (unsigned)arg_long(argc, argv, 1, 16, usage);
    unsigned batches = (unsigned)arg_long(argc, argv, 2, 3, usage);
    unsigned workers = (unsigned)arg_long(argc, argv, 3, 3, usage);
    unsigned long work = (unsigned long)arg_long(argc, argv, 4, 100000, usage);

    std::vector<Summary> results(tasks);          // zeroed by Summary's constructor
    std::vector<std::atomic<int>> runs(tasks);
    std::vector<uint32_t> log(tasks);             // completion order, claimed by fetch_add
    std::atomic<size_t> log_tail{0};
    ThreadPool pool(workers, 8);

    for (unsigned b = 0; b < batches; b++) {
        for (auto &r : runs)
            r.store(0);
        log_tail.store(0);
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
                results[t] = s;
                size_t slot = log_tail.fetch_add(1); // claims the slot atomically
                assert(slot < tasks);
                log[slot] = t;
            });
        }
        pool.wait_idle();

        assert(log_tail.load() == tasks);
        std::vector<int> seen(tasks, 0);
        for (unsigned i = 0; i < tasks; i++)
            seen[log[i]]++;
        for (unsigned t = 0; t < tasks; t++) {
            assert(runs[t].load() == 1);
            assert(seen[t] == 1);
            const Summary &s = results[t];
            assert(s.task == t && s.batch == b && s.steps == task_rounds(b, t, work));
            assert(s.hash == expected_hash(b, t, work) && s.check == (s.hash ^ t));
            assert(s.worker >= 1 && s.worker <= workers);
        }
        results.assign(tasks, Summary());
    }
    pool.shutdown();
    assert(pool.executed() == (unsigned long)tasks * batches);
    std::printf("cxx-pool: %u batches of %u tasks on %u workers, all results right\n", batches, tasks, workers);
    return 0;
}

//! IO_THREADS (zmq_ctx_set(3)): the context runs that many I/O threads. Alone in its test
//! binary so that no other test's context adds threads while this one counts them.

use oxmq::{opt, Context, Error, SocketType as T};

/// Threads of this process named like oxmq's I/O threads.
fn io_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).map(|c| c.starts_with("oxmq-io-")).unwrap_or(false))
        .count()
}

/// A thread takes its name when it first runs, so a just-started I/O thread may not show it
/// yet: wait (bounded) until the count is `n`.
fn wait_for_io_threads(n: usize) -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let got = io_threads();
        if got == n || std::time::Instant::now() > deadline {
            return got;
        }
        std::thread::yield_now();
    }
}

#[test]
fn io_threads_sets_the_thread_count() {
    assert_eq!(io_threads(), 0);
    let ctx = Context::new();
    ctx.set(opt::IO_THREADS, 3).unwrap();
    assert_eq!(ctx.get(opt::IO_THREADS).unwrap(), 3);
    let mut socks = Vec::new();
    for _ in 0..3 {
        let mut s = ctx.socket(T::Pull).unwrap();
        s.bind("tcp://127.0.0.1:*").unwrap();
        socks.push(s);
    }
    assert_eq!(wait_for_io_threads(3), 3, "three I/O threads started");
    // Fixed once the threads run, as in libzmq.
    assert_eq!(ctx.set(opt::IO_THREADS, 1).unwrap_err(), Error::Invalid);
    drop(socks);
    ctx.term().unwrap();
    assert_eq!(wait_for_io_threads(0), 0, "term stops them");
}

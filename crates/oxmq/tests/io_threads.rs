//! IO_THREADS (zmq_ctx_set(3)): the context runs that many I/O threads. Alone in its test
//! binary so that no other test's context adds threads while this one counts them.

use oxmq::{opt, Context, Error, SocketType as T};

/// Threads of this process named like oxmq's I/O threads.
fn io_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm")).map(|c| c.starts_with("oxmq-io-")).unwrap_or(false)
        })
        .count()
}

/// Polls `cond` every millisecond for up to 5 s.
fn wait_for(cond: impl Fn() -> bool, what: &str) {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !cond() {
        assert!(std::time::Instant::now() < end, "timed out: {what}");
        std::thread::sleep(std::time::Duration::from_millis(1));
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
    // A new thread names itself as it starts: wait for the names, then check no more appear.
    wait_for(|| io_threads() >= 3, "three I/O threads named");
    assert_eq!(io_threads(), 3, "three I/O threads started");
    // Fixed once the threads run, as in libzmq.
    assert_eq!(ctx.set(opt::IO_THREADS, 1).unwrap_err(), Error::Invalid);
    drop(socks);
    ctx.term().unwrap();
    // Joined already; the kernel may list an exited thread for a moment after the join.
    wait_for(|| io_threads() == 0, "term stops the I/O threads");
}

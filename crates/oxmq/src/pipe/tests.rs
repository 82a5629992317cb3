use super::*;
use std::sync::Mutex as StdMutex;

#[derive(Default)]
struct Log(StdMutex<Vec<(usize, Wake)>>);
impl Owner for Log {
    fn wake(&self, id: PipeId, what: Wake) {
        self.0.lock().unwrap().push((id.slot, what));
    }
}

fn m(s: &str, more: bool) -> Msg {
    let mut m = Msg::from(s);
    m.set_more(more);
    m
}

/// A non-blocking check at the HWM re-reads the reader's progress once per LAZY_CREDIT:
/// room that appears sooner is refused, but the write activation still comes (posted by
/// the writer itself when the reader published before it registered), and a blocking
/// check sees the room at once.
#[test]
fn lazy_check_reads_progress_once_per_interval_and_still_activates() {
    let (mut a, mut b) = pipe([1, 1]);
    let log = Arc::new(Log::default());
    a.set_owner(log.clone(), PipeId { slot: 0, serial: 0 });
    let send = |a: &mut PipeEnd, b: &mut PipeEnd| {
        a.write(m("x", false));
        a.flush();
        assert!(matches!(b.read(), Read::Msg(_)));
    };
    assert!(a.check_write_lazy(0), "an empty pipe has room");
    send(&mut a, &mut b);
    let t = std::time::Instant::now();
    assert!(a.check_write_lazy(0), "the first look at the HWM reads the progress");
    send(&mut a, &mut b);
    assert!(log.0.lock().unwrap().is_empty());
    let refused = !a.check_write_lazy(0);
    // (A thread descheduled for the whole interval has nothing to check here.)
    if t.elapsed() < LAZY_CREDIT {
        assert!(refused, "the progress is not read again within the interval");
        // Room was there already: the writer posted its own activation.
        assert_eq!(*log.0.lock().unwrap(), vec![(0, Wake::Write)]);
    }
    let t = std::time::Instant::now();
    assert!(a.check_write_lazy(1), "a look after the owner waited reads the progress");
    send(&mut a, &mut b);
    let refused = !a.check_write_lazy(1);
    assert!(refused || t.elapsed() >= LAZY_CREDIT);
    assert!(a.check_write(), "a blocking check reads the progress");
    send(&mut a, &mut b);
    let t = std::time::Instant::now();
    while t.elapsed() < LAZY_CREDIT {
        std::hint::spin_loop(); // the interval under test, not a settle wait
    }
    assert!(a.check_write_lazy(1), "after the interval the progress is read again");
}

#[test]
fn read_wakeup_only_from_sleep() {
    let (mut a, mut b) = pipe([0, 0]);
    let log = Arc::new(Log::default());
    b.set_owner(log.clone(), PipeId { slot: 1, serial: 0 });
    a.write(m("x", false));
    a.flush();
    a.write(m("y", false));
    a.flush();
    assert_eq!(*log.0.lock().unwrap(), vec![(1, Wake::Read)]);
    assert!(matches!(b.read(), Read::Msg(x) if x == "x"));
    assert!(matches!(b.read(), Read::Msg(x) if x == "y"));
    assert!(matches!(b.read(), Read::Empty));
}

/// `front` without `refresh` sees only what an earlier look found published, stays awake
/// when that runs out (the writer is not asked to wake it), and a refreshing look then
/// finds the rest or goes to sleep.
#[test]
fn front_without_refresh_keeps_to_what_it_saw() {
    let (mut a, mut b) = pipe([0, 0]);
    let log = Arc::new(Log::default());
    b.set_owner(log.clone(), PipeId { slot: 1, serial: 0 });
    fn next(b: &mut PipeEnd, refresh: bool) -> Result<Vec<u8>, Absent> {
        b.take_front(refresh, &mut crate::chunk::Releases::new(), |m| m.to_vec())
    }
    a.write(m("x", false));
    a.flush(); // the reader starts asleep: one wake-up
    assert_eq!(next(&mut b, true).unwrap(), b"x");
    a.write(m("y", false));
    a.flush();
    assert!(matches!(next(&mut b, false), Err(Absent::Empty)), "y was published after the last look");
    a.write(m("z", false));
    a.flush();
    assert_eq!(log.0.lock().unwrap().len(), 1, "a reader that did not sleep is not woken");
    assert_eq!(next(&mut b, true).unwrap(), b"y");
    assert_eq!(next(&mut b, false).unwrap(), b"z", "z was published before that look");
    assert!(matches!(next(&mut b, false), Err(Absent::Empty)));
    assert!(matches!(next(&mut b, true), Err(Absent::Empty)));
    a.write(m("w", false));
    a.flush();
    assert_eq!(log.0.lock().unwrap().len(), 2, "a refreshing look that found nothing slept");
    drop(a);
    assert_eq!(next(&mut b, true).unwrap(), b"w");
    assert!(matches!(next(&mut b, false), Err(Absent::Empty)), "no look, so no news of the close");
    assert!(matches!(next(&mut b, true), Err(Absent::Closed)));
}

#[test]
fn multipart_is_published_whole() {
    let (mut a, mut b) = pipe([0, 0]);
    a.write(m("1", true));
    a.flush();
    assert!(matches!(b.read(), Read::Empty), "half a message is invisible");
    a.write(m("2", false));
    a.flush();
    assert!(matches!(b.read(), Read::Msg(x) if x == "1" && x.more()));
    assert!(matches!(b.read(), Read::Msg(x) if x == "2" && !x.more()));
}

#[test]
fn hwm_blocks_and_reader_wakes_writer() {
    let (mut a, mut b) = pipe([4, 0]);
    let log = Arc::new(Log::default());
    a.set_owner(log.clone(), PipeId { slot: 0, serial: 0 });
    for i in 0..4 {
        assert!(a.check_write());
        a.write(m(&i.to_string(), false));
    }
    a.flush();
    assert!(!a.check_write(), "at HWM");
    assert!(matches!(b.read(), Read::Msg(_)));
    // lwm for hwm 4 is 1: the read is published at once and the writer woken.
    assert!(log.0.lock().unwrap().contains(&(0, Wake::Write)));
    assert!(a.check_write());
}

#[test]
fn conflated_direction_holds_one_message_and_wakes_the_reader() {
    let (mut a, mut b) = pipe([1, 1]);
    PipeEnd::conflate((false, true), &mut a, &mut b);
    let log = Arc::new(Log::default());
    b.set_owner(log.clone(), PipeId { slot: 3, serial: 0 });
    let mut id = Msg::from("peer");
    id.set_flags(crate::msg::ROUTING_ID);
    a.write(id);
    a.flush();
    assert!(matches!(b.read(), Read::Msg(m) if m.is_routing_id()), "the routing id is never conflated");
    assert!(matches!(b.read(), Read::Empty));
    for i in 0..10_000 {
        assert!(a.check_write(), "a conflating writer never waits (HWM 1 ignored)");
        a.write(m(&i.to_string(), false));
        a.flush();
    }
    // One slot, not a queue of 10 000: nothing went into the queue.
    assert!(!b.inp.has_data());
    assert!(log.0.lock().unwrap().contains(&(3, Wake::Read)), "the sleeping reader was woken");
    assert!(b.has_data());
    assert!(matches!(b.read(), Read::Msg(x) if x == "9999"));
    assert!(matches!(b.read(), Read::Empty));
    a.write(m("last", false));
    a.flush();
    drop(a);
    assert!(matches!(b.read(), Read::Msg(x) if x == "last"), "written before close: delivered");
    assert!(matches!(b.read(), Read::Closed));
}

/// A farewell comes after everything the peer published (not its half message), once,
/// and only when the peer closed.
#[test]
fn farewell_is_read_last_once_the_peer_closes() {
    let (mut a, mut b) = pipe([0, 0]);
    let log = Arc::new(Log::default());
    b.set_owner(log.clone(), PipeId { slot: 2, serial: 0 });
    b.set_farewell(m("bye", false));
    a.write(m("1", false));
    a.flush();
    assert!(b.has_data());
    assert!(matches!(b.read(), Read::Msg(x) if x == "1"));
    assert!(!b.has_data(), "the peer is still there: no farewell yet");
    assert!(matches!(b.read(), Read::Empty));
    a.write(m("2", false));
    a.write(m("half", true));
    drop(a);
    assert!(log.0.lock().unwrap().contains(&(2, Wake::Closed)));
    assert!(matches!(b.read(), Read::Msg(x) if x == "2"));
    assert!(b.has_data(), "the farewell is ready to read");
    assert!(matches!(b.peek(), Some(x) if *x == "bye"));
    let mut out = Msg::new();
    assert!(matches!(b.read_into(&mut out), Some(Read::Msg(x)) if x == "bye" && !x.more()));
    assert!(!b.has_data());
    assert!(matches!(b.read(), Read::Closed), "read once");
}

#[test]
fn close_delivers_what_was_flushed_then_reports_closed() {
    let (mut a, mut b) = pipe([0, 0]);
    let log = Arc::new(Log::default());
    b.set_owner(log.clone(), PipeId { slot: 7, serial: 0 });
    a.write(m("last", false));
    a.write(m("half", true));
    drop(a);
    assert!(log.0.lock().unwrap().contains(&(7, Wake::Closed)));
    assert!(matches!(b.read(), Read::Msg(x) if x == "last"));
    assert!(matches!(b.read(), Read::Closed), "the half message is dropped, not delivered");
}

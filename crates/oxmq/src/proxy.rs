//! The built-in proxy: moves messages between a frontend and a backend socket, as libzmq's
//! `zmq_proxy` and `zmq_proxy_steerable` do.
//!
//! The proxy runs on the calling thread until the context is terminated (`Error::Term`) or, for
//! [`proxy_steerable`], until `TERMINATE` arrives on the control socket. One socket may serve as
//! both frontend and backend ([`Ends::One`], libzmq's echo device). Each multi-part message
//! moves whole: its parts are read and written back to back, so parts of two messages never
//! interleave. An optional capture socket receives a copy of every part moved in either
//! direction. The proxy is written on the public API only (`poll`, `recv_msg`, `send_msg`,
//! `rcvmore`), so it needs no access to socket internals.
//!
//! Control commands (libzmq 4.3.5's set; each is a single-frame message on `control`):
//! - `PAUSE`: stop moving messages (they queue in the sockets, subject to their HWMs).
//! - `RESUME`: move messages again.
//! - `TERMINATE`: return `Ok(())`.
//! - `STATISTICS`: reply with eight frames, each a native-endian `u64`: messages and bytes
//!   received on the frontend, messages and bytes sent on the frontend, then the same four for
//!   the backend. A "message" counts all its parts once; bytes count every part.
//!
//! A REP control socket must answer every request, so `PAUSE`, `RESUME` and `TERMINATE` (and an
//! unknown command) are answered with an empty frame when `control` is REP, as libzmq does.
//! Other unknown commands are ignored.

use crate::{opt, poll, Error, Msg, PollItem, Result, Socket};

/// At most this many messages move in one direction before the other side gets a turn, so a
/// busy direction cannot starve the other (libzmq uses the same bound).
const BURST: usize = 1000;

/// `SocketType::as_raw()` of REP.
const REP: i32 = 4;

/// Counters for one side of the proxy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SideStats {
    /// Frames received on this side.
    pub msgs_in: u64,
    /// Bytes of those frames.
    pub bytes_in: u64,
    /// Frames sent on this side.
    pub msgs_out: u64,
    /// Bytes of those frames.
    pub bytes_out: u64,
}

/// What `STATISTICS` reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProxyStats {
    /// The frontend socket's counts.
    pub frontend: SideStats,
    /// The backend socket's counts.
    pub backend: SideStats,
}

impl ProxyStats {
    /// The eight values in the order of the `STATISTICS` reply.
    pub fn to_array(&self) -> [u64; 8] {
        let (f, b) = (&self.frontend, &self.backend);
        [f.msgs_in, f.bytes_in, f.msgs_out, f.bytes_out, b.msgs_in, b.bytes_in, b.msgs_out, b.bytes_out]
    }
}

/// Runs the proxy until the context is terminated. Never returns `Ok`: like `zmq_proxy`, it
/// ends with the error that stopped it (normally `Error::Term`).
///
/// Blocking: yes, on the calling thread. Sockets keep their own options (HWM, timeouts).
pub fn proxy(frontend: &mut Socket, backend: &mut Socket, capture: Option<&mut Socket>) -> Result<()> {
    proxy_steerable(frontend, backend, capture, None)
}

/// Like [`proxy`], steered by commands on `control` (see the module comment). Returns `Ok(())`
/// after `TERMINATE`; any other end is the error that stopped it.
pub fn proxy_steerable(
    frontend: &mut Socket,
    backend: &mut Socket,
    capture: Option<&mut Socket>,
    control: Option<&mut Socket>,
) -> Result<()> {
    run(Ends::Two(frontend, backend), capture, control, None)
}

/// The two ends a proxy moves messages between.
pub enum Ends<'a> {
    /// A frontend and a distinct backend.
    Two(&'a mut Socket, &'a mut Socket),
    /// One socket as both frontend and backend (libzmq's echo device: a REP's requests go
    /// back to it as replies).
    One(&'a mut Socket),
}

/// The proxy in full: [`Ends`], an optional capture and control socket, and an optional
/// descriptor that stops it with `Error::NotSock` when it becomes readable (the C ABI's
/// `zmq_close` of a socket the proxy is using, from another thread).
///
/// A direction moves only while its destination can take a message (POLLOUT, as libzmq
/// 4.3): a backend with no peer leaves messages queued in the frontend, and the proxy keeps
/// serving its control socket meanwhile instead of blocking in a send.
pub fn run(
    mut ends: Ends<'_>,
    mut capture: Option<&mut Socket>,
    mut control: Option<&mut Socket>,
    stop: Option<std::os::fd::RawFd>,
) -> Result<()> {
    let mut stats = ProxyStats::default();
    let mut paused = false;
    // A direction whose destination was found full: its source is not polled for input
    // until the destination is writable again.
    let (mut fwd_blocked, mut bwd_blocked) = (false, false);
    loop {
        let r = wait(&mut ends, control.as_deref_mut(), stop, paused, fwd_blocked, bwd_blocked)?;
        if r.stop {
            return Err(Error::NotSock);
        }
        if r.control_in {
            if let Some(ctl) = control.as_deref_mut() {
                match command(ctl)? {
                    Command::Pause => paused = true,
                    Command::Resume => paused = false,
                    Command::Terminate => return Ok(()),
                    Command::Statistics => send_stats(ctl, &stats)?,
                    Command::Other => {}
                }
            }
        }
        if paused {
            continue;
        }
        match &mut ends {
            Ends::One(s) => {
                if r.front_in {
                    let (from, to) = (&mut stats.frontend, &mut stats.backend);
                    forward(s, None, capture.as_deref_mut(), from, to)?;
                }
            }
            Ends::Two(f, b) => {
                if r.back_out {
                    fwd_blocked = false;
                }
                if r.front_out {
                    bwd_blocked = false;
                }
                if r.front_in && !fwd_blocked {
                    let (from, to) = (&mut stats.frontend, &mut stats.backend);
                    fwd_blocked = !forward(f, Some(b), capture.as_deref_mut(), from, to)?;
                }
                if r.back_in && !bwd_blocked {
                    let (from, to) = (&mut stats.backend, &mut stats.frontend);
                    bwd_blocked = !forward(b, Some(f), capture.as_deref_mut(), from, to)?;
                }
            }
        }
    }
}

/// What one wait found.
#[derive(Default)]
struct Ready {
    front_in: bool,
    front_out: bool,
    back_in: bool,
    back_out: bool,
    control_in: bool,
    stop: bool,
}

/// Blocks until there is something to do. While paused only the control socket (and `stop`)
/// are watched; a blocked direction waits for its destination's POLLOUT instead of its
/// source's POLLIN.
fn wait(
    ends: &mut Ends<'_>,
    control: Option<&mut Socket>,
    stop: Option<std::os::fd::RawFd>,
    paused: bool,
    fwd_blocked: bool,
    bwd_blocked: bool,
) -> Result<Ready> {
    let mut items: Vec<PollItem<'_>> = Vec::with_capacity(4);
    let (mut front, mut back, mut ctl, mut stp) = (None, None, None, None);
    if !paused {
        match ends {
            Ends::One(s) => {
                front = Some(items.len());
                items.push(PollItem::socket(s, opt::POLLIN));
            }
            Ends::Two(f, b) => {
                let fe = if fwd_blocked { 0 } else { opt::POLLIN } | if bwd_blocked { opt::POLLOUT } else { 0 };
                let be = if bwd_blocked { 0 } else { opt::POLLIN } | if fwd_blocked { opt::POLLOUT } else { 0 };
                front = Some(items.len());
                items.push(PollItem::socket(f, fe));
                back = Some(items.len());
                items.push(PollItem::socket(b, be));
            }
        }
    }
    if let Some(c) = control {
        ctl = Some(items.len());
        items.push(PollItem::socket(c, opt::POLLIN));
    }
    if let Some(fd) = stop {
        stp = Some(items.len());
        items.push(PollItem::fd(fd, opt::POLLIN));
    }
    if items.is_empty() {
        // Paused without a control socket cannot happen (only control pauses); guard anyway.
        return Err(Error::Invalid);
    }
    poll(&mut items, -1)?;
    let ev = |i: Option<usize>| i.map_or(0, |i| items[i].revents());
    Ok(Ready {
        front_in: ev(front) & opt::POLLIN != 0,
        front_out: ev(front) & opt::POLLOUT != 0,
        back_in: ev(back) & opt::POLLIN != 0,
        back_out: ev(back) & opt::POLLOUT != 0,
        control_in: ev(ctl) & opt::POLLIN != 0,
        stop: ev(stp) & opt::POLLIN != 0,
    })
}

/// Moves up to [`BURST`] whole messages from `from` to `to` (back to `from` itself when `to`
/// is `None`), copying each part to `capture`. Returns false when it stopped because `to`
/// cannot take another message now (checked before each message is read, so a message is
/// never read that cannot be sent).
fn forward(
    from: &mut Socket,
    mut to: Option<&mut Socket>,
    mut capture: Option<&mut Socket>,
    from_stats: &mut SideStats,
    to_stats: &mut SideStats,
) -> Result<bool> {
    for _ in 0..BURST {
        if let Some(t) = to.as_deref_mut() {
            if t.events()? & opt::POLLOUT == 0 {
                return Ok(false);
            }
        }
        let mut bytes = 0u64;
        let mut first = true;
        loop {
            let mut msg = Msg::new();
            // The first part may not be there (the burst is over); later parts of a message
            // always are, since messages arrive whole.
            let flags = if first { opt::DONTWAIT } else { 0 };
            match from.recv_msg(&mut msg, flags) {
                Ok(()) => {}
                Err(Error::Again) if first => return Ok(true),
                Err(e) => return Err(e),
            }
            first = false;
            let more = from.rcvmore();
            let send_flags = if more { opt::SNDMORE } else { 0 };
            bytes += msg.len() as u64;
            if let Some(cap) = capture.as_deref_mut() {
                cap.send(Msg::from(&msg), send_flags)?;
            }
            msg.set_more(more);
            match to.as_deref_mut() {
                Some(t) => t.send_msg(&mut msg, send_flags)?,
                None => from.send_msg(&mut msg, send_flags)?,
            }
            if !more {
                break;
            }
        }
        from_stats.msgs_in += 1;
        from_stats.bytes_in += bytes;
        to_stats.msgs_out += 1;
        to_stats.bytes_out += bytes;
    }
    Ok(true)
}

enum Command {
    Pause,
    Resume,
    Terminate,
    Statistics,
    Other,
}

/// Reads one command (all its parts; only the first counts) and answers it when `ctl` is REP
/// and the command has no reply of its own.
fn command(ctl: &mut Socket) -> Result<Command> {
    let mut msg = Msg::new();
    match ctl.recv_msg(&mut msg, opt::DONTWAIT) {
        Ok(()) => {}
        // Spurious readiness: nothing to do this round.
        Err(Error::Again) => return Ok(Command::Other),
        Err(e) => return Err(e),
    }
    while ctl.rcvmore() {
        let mut rest = Msg::new();
        ctl.recv_msg(&mut rest, 0)?;
    }
    let cmd = match msg.as_slice() {
        b"PAUSE" => Command::Pause,
        b"RESUME" => Command::Resume,
        b"TERMINATE" => Command::Terminate,
        b"STATISTICS" => Command::Statistics,
        _ => Command::Other,
    };
    if !matches!(cmd, Command::Statistics) && ctl.socket_type().as_raw() == REP {
        ctl.send(Msg::new(), 0)?;
    }
    Ok(cmd)
}

fn send_stats(ctl: &mut Socket, stats: &ProxyStats) -> Result<()> {
    let values = stats.to_array();
    for (i, v) in values.iter().enumerate() {
        let flags = if i + 1 < values.len() { opt::SNDMORE } else { 0 };
        ctl.send(&v.to_ne_bytes(), flags)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, SocketType};

    #[test]
    fn steerable_moves_counts_pauses_and_terminates() {
        let ctx = Context::new();
        let mut fe = ctx.socket(SocketType::from_raw(7).unwrap()).unwrap(); // PULL
        let mut be = ctx.socket(SocketType::from_raw(8).unwrap()).unwrap(); // PUSH
        let mut ctl = ctx.socket(SocketType::from_raw(4).unwrap()).unwrap(); // REP
        fe.bind("inproc://proxy-fe").unwrap();
        be.bind("inproc://proxy-be").unwrap();
        ctl.bind("inproc://proxy-ctl").unwrap();
        let t = std::thread::spawn(move || proxy_steerable(&mut fe, &mut be, None, Some(&mut ctl)));

        let mut client = ctx.socket(SocketType::from_raw(8).unwrap()).unwrap();
        let mut worker = ctx.socket(SocketType::from_raw(7).unwrap()).unwrap();
        let mut boss = ctx.socket(SocketType::from_raw(3).unwrap()).unwrap(); // REQ
        client.connect("inproc://proxy-fe").unwrap();
        worker.connect("inproc://proxy-be").unwrap();
        boss.connect("inproc://proxy-ctl").unwrap();
        worker.set_int(opt::RCVTIMEO, 5000).unwrap();
        boss.set_int(opt::RCVTIMEO, 5000).unwrap();

        client.send("a", opt::SNDMORE).unwrap();
        client.send("bc", 0).unwrap();
        let parts = worker.recv_multipart(0).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], "a");
        assert_eq!(parts[1], "bc");

        boss.send("STATISTICS", 0).unwrap();
        let stats = boss.recv_multipart(0).unwrap();
        assert_eq!(stats.len(), 8);
        let v: Vec<u64> = stats.iter().map(|m| u64::from_ne_bytes(m.as_slice().try_into().unwrap())).collect();
        assert_eq!(v, [1, 3, 0, 0, 0, 0, 1, 3]);

        boss.send("PAUSE", 0).unwrap();
        assert_eq!(boss.recv(0).unwrap().len(), 0);
        client.send("held", 0).unwrap();
        worker.set_int(opt::RCVTIMEO, 100).unwrap();
        assert_eq!(worker.recv(0).unwrap_err(), Error::Again, "paused proxy moved a message");
        boss.send("RESUME", 0).unwrap();
        assert_eq!(boss.recv(0).unwrap().len(), 0);
        worker.set_int(opt::RCVTIMEO, 5000).unwrap();
        assert_eq!(worker.recv(0).unwrap(), "held");

        boss.send("TERMINATE", 0).unwrap();
        assert_eq!(boss.recv(0).unwrap().len(), 0);
        assert_eq!(t.join().unwrap(), Ok(()));
    }

    #[test]
    fn proxy_ends_with_term_on_shutdown() {
        let ctx = Context::new();
        let mut fe = ctx.socket(SocketType::from_raw(7).unwrap()).unwrap();
        let mut be = ctx.socket(SocketType::from_raw(8).unwrap()).unwrap();
        fe.bind("inproc://proxy-term-fe").unwrap();
        be.bind("inproc://proxy-term-be").unwrap();
        let t = std::thread::spawn(move || proxy(&mut fe, &mut be, None));
        ctx.shutdown();
        assert_eq!(t.join().unwrap(), Err(Error::Term));
    }

    #[test]
    fn one_socket_is_an_echo_device() {
        let ctx = Context::new();
        let mut rep = ctx.socket(SocketType::from_raw(4).unwrap()).unwrap(); // REP
        let mut ctl = ctx.socket(SocketType::from_raw(0).unwrap()).unwrap(); // PAIR
        rep.bind("inproc://proxy-echo").unwrap();
        ctl.bind("inproc://proxy-echo-ctl").unwrap();
        let t = std::thread::spawn(move || run(Ends::One(&mut rep), None, Some(&mut ctl), None));
        let mut req = ctx.socket(SocketType::from_raw(3).unwrap()).unwrap(); // REQ
        let mut boss = ctx.socket(SocketType::from_raw(0).unwrap()).unwrap();
        req.connect("inproc://proxy-echo").unwrap();
        boss.connect("inproc://proxy-echo-ctl").unwrap();
        req.set_int(opt::RCVTIMEO, 5000).unwrap();
        for m in ["msg1", "msg22"] {
            req.send(m, 0).unwrap();
            assert_eq!(req.recv(0).unwrap(), m);
        }
        boss.send("TERMINATE", 0).unwrap();
        assert_eq!(t.join().unwrap(), Ok(()));
    }

    /// A backend with no peer: the proxy stops reading the frontend (nothing is lost in a
    /// send it cannot finish) and still reads TERMINATE (libzmq's test_proxy_terminate).
    #[test]
    fn terminate_is_read_while_the_backend_cannot_send() {
        let ctx = Context::new();
        let mut fe = ctx.socket(SocketType::from_raw(7).unwrap()).unwrap(); // PULL
        let mut be = ctx.socket(SocketType::from_raw(8).unwrap()).unwrap(); // PUSH, no peer
        let mut ctl = ctx.socket(SocketType::from_raw(0).unwrap()).unwrap();
        fe.bind("inproc://proxy-stuck-fe").unwrap();
        be.bind("inproc://proxy-stuck-be").unwrap();
        ctl.bind("inproc://proxy-stuck-ctl").unwrap();
        let t = std::thread::spawn(move || proxy_steerable(&mut fe, &mut be, None, Some(&mut ctl)));
        let mut client = ctx.socket(SocketType::from_raw(8).unwrap()).unwrap();
        let mut boss = ctx.socket(SocketType::from_raw(0).unwrap()).unwrap();
        client.connect("inproc://proxy-stuck-fe").unwrap();
        boss.connect("inproc://proxy-stuck-ctl").unwrap();
        for _ in 0..3 {
            client.send("x", 0).unwrap();
        }
        boss.send("STATISTICS", 0).unwrap();
        let v = boss.recv_multipart(0).unwrap();
        assert_eq!(v.len(), 8);
        boss.send("TERMINATE", 0).unwrap();
        assert_eq!(t.join().unwrap(), Ok(()));
    }

    #[test]
    fn a_readable_stop_descriptor_ends_the_proxy() {
        let ctx = Context::new();
        let mut fe = ctx.socket(SocketType::from_raw(7).unwrap()).unwrap();
        let mut be = ctx.socket(SocketType::from_raw(8).unwrap()).unwrap();
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let t = std::thread::spawn(move || run(Ends::Two(&mut fe, &mut be), None, None, Some(fds[0])));
        // SAFETY: fds[1] is the pipe's open write end; one byte from a valid buffer.
        assert_eq!(unsafe { libc::write(fds[1], b"x".as_ptr().cast(), 1) }, 1);
        assert_eq!(t.join().unwrap(), Err(Error::NotSock));
        // SAFETY: both ends are ours and no longer used.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }
}

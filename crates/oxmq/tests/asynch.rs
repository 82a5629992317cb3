//! The async API end to end, on three executors: tokio's multi-thread and current-thread
//! runtimes and smol. Every socket type talks over a real transport; cancellation (dropped
//! receive and send futures, `select!`, timeouts) loses nothing and never splits a message.

use futures::{SinkExt, StreamExt};
use oxmq::asynch::{AsyncSocket, Message};
use oxmq::{opt, Context, Error, SocketType};
use std::future::Future;
use std::time::Duration;

/// Each test body runs on each executor.
fn on_every_executor<F, Fut>(body: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let multi = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    bounded(multi.block_on(async { tokio::time::timeout(Duration::from_secs(30), tokio::spawn(body())).await }));
    let current = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    bounded(current.block_on(async { tokio::time::timeout(Duration::from_secs(30), body()).await.map(Ok::<(), ()>) }));
    let fut = body();
    smol::block_on(async {
        let deadline = async {
            smol::Timer::after(Duration::from_secs(30)).await;
            panic!("timed out on smol");
        };
        futures::pin_mut!(fut);
        futures::pin_mut!(deadline);
        futures::future::select(fut, deadline).await;
    });
}

fn bounded<T, E: std::fmt::Debug>(r: Result<Result<(), E>, T>) {
    match r {
        Ok(inner) => inner.expect("task"),
        Err(_) => panic!("timed out"),
    }
}

/// A sleep usable on every executor here (tokio's needs a tokio runtime).
async fn sleep(d: Duration) {
    if tokio::runtime::Handle::try_current().is_ok() {
        tokio::time::sleep(d).await
    } else {
        smol::Timer::after(d).await;
    }
}

fn pair(ctx: &Context, a: SocketType, b: SocketType, transport: &str) -> (AsyncSocket, AsyncSocket) {
    let mut x = AsyncSocket::new(ctx, a).unwrap();
    let ep = match transport {
        "inproc" => {
            let ep = format!("inproc://asynch-{}", unique());
            x.bind(&ep).unwrap();
            ep
        }
        "ipc" => {
            let ep = format!("ipc:///tmp/oxmq-asynch-{}-{}", std::process::id(), unique());
            x.bind(&ep).unwrap();
            ep
        }
        _ => {
            x.bind("tcp://127.0.0.1:*").unwrap();
            x.last_endpoint().unwrap()
        }
    };
    let mut y = AsyncSocket::new(ctx, b).unwrap();
    y.connect(&ep).unwrap();
    (x, y)
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

fn bodies(m: &Message) -> Vec<Vec<u8>> {
    m.iter().map(|f| f.to_vec()).collect()
}

#[test]
fn req_rep_over_tcp_ipc_and_inproc() {
    on_every_executor(|| async {
        let ctx = Context::new();
        for t in ["tcp", "ipc", "inproc"] {
            let (mut rep, mut req) = pair(&ctx, SocketType::Rep, SocketType::Req, t);
            for i in 0..50u32 {
                req.send(i.to_be_bytes().to_vec()).await.unwrap();
                let m = rep.recv().await.unwrap();
                rep.send(m).await.unwrap();
                assert_eq!(req.recv().await.unwrap()[0], &i.to_be_bytes());
            }
        }
    });
}

#[test]
fn the_opt_in_receive_spin_keeps_every_message_and_still_sleeps() {
    on_every_executor(|| async {
        let ctx = Context::new();
        let (mut rep, mut req) = pair(&ctx, SocketType::Rep, SocketType::Req, "tcp");
        rep.set_recv_spin(Duration::from_micros(50));
        req.set_recv_spin(Duration::from_micros(50));
        let server = async move {
            for _ in 0..200 {
                let m = rep.recv().await.unwrap();
                rep.send(m).await.unwrap();
            }
            rep
        };
        let client = async move {
            for i in 0..200u32 {
                if i % 50 == 49 {
                    // A pause longer than the spin: the next receive goes pending and is
                    // woken by the engine as without the spin.
                    sleep(Duration::from_millis(2)).await;
                }
                req.send(i.to_be_bytes().to_vec()).await.unwrap();
                assert_eq!(req.recv().await.unwrap()[0], &i.to_be_bytes());
            }
            // REQ's state is kept across the spin: a second receive is still EFSM.
            assert_eq!(req.recv().await.unwrap_err(), Error::Fsm);
            req
        };
        futures::join!(server, client);
    });
}

#[test]
fn a_receive_reads_waiting_input_on_its_own_thread() {
    // A stream outruns its receiver now and then, leaving input in the kernel that the
    // receive, finding its queue empty, reads itself (a direct read) before it would go
    // pending. With no HWM the pipe never fills, so no other path reads directly here.
    on_every_executor(|| async {
        let ctx = Context::new();
        let mut pull = AsyncSocket::new(&ctx, SocketType::Pull).unwrap();
        pull.set_int(opt::RCVHWM, 0).unwrap();
        pull.bind("tcp://127.0.0.1:*").unwrap();
        let mut push = ctx.socket(SocketType::Push).unwrap();
        push.connect(&pull.last_endpoint().unwrap()).unwrap();
        // Rounds until one saw it, at most 20: whether a receive finds input the I/O thread
        // has not read yet is a race, which a round wins most of the time.
        for _ in 0..20 {
            let sender = std::thread::spawn(move || {
                for _ in 0..100_000u32 {
                    push.send("x", 0).unwrap();
                }
                push
            });
            for _ in 0..100_000u32 {
                assert_eq!(pull.recv().await.unwrap()[0], "x");
            }
            push = blocking_join(sender).await;
            if pull.get_mut().stats().direct_reads > 0 {
                return;
            }
        }
        panic!("no input was read by the receiving task");
    });
}

#[test]
fn multipart_messages_arrive_whole() {
    on_every_executor(|| async {
        let ctx = Context::new();
        let (mut pull, mut push) = pair(&ctx, SocketType::Pull, SocketType::Push, "tcp");
        let sender = async move {
            for i in 0..200usize {
                let m: Message = (0..=(i % 5)).map(|k| format!("{i}:{k}")).collect();
                push.send(m).await.unwrap();
            }
            push
        };
        let receiver = async move {
            for i in 0..200usize {
                let m = pull.recv().await.unwrap();
                let want: Vec<Vec<u8>> = (0..=(i % 5)).map(|k| format!("{i}:{k}").into_bytes()).collect();
                assert_eq!(bodies(&m), want);
            }
        };
        let (_push, ()) = futures::join!(sender, receiver);
    });
}

#[test]
fn every_socket_type_sends_and_receives() {
    on_every_executor(|| async {
        let ctx = Context::new();
        // PAIR, DEALER/ROUTER (routing id frame), PUSH/PULL, CLIENT/SERVER, SCATTER/GATHER,
        // CHANNEL, over tcp.
        let (mut a, mut b) = pair(&ctx, SocketType::Pair, SocketType::Pair, "tcp");
        b.send("ping").await.unwrap();
        assert_eq!(a.recv().await.unwrap()[0], "ping");
        a.send(["x", "y"]).await.unwrap();
        assert_eq!(bodies(&b.recv().await.unwrap()), [b"x".to_vec(), b"y".to_vec()]);

        let (mut router, mut dealer) = pair(&ctx, SocketType::Router, SocketType::Dealer, "tcp");
        dealer.send(["", "job"]).await.unwrap();
        let mut m = router.recv().await.unwrap();
        assert_eq!(m.len(), 3);
        let id = m.pop_front().unwrap();
        router.send(Message::from(id).with("").with("done")).await.unwrap();
        assert_eq!(bodies(&dealer.recv().await.unwrap()), [b"".to_vec(), b"done".to_vec()]);

        let (mut server, mut client) = pair(&ctx, SocketType::Server, SocketType::Client, "tcp");
        client.send("hi").await.unwrap();
        let m = server.recv().await.unwrap();
        let mut reply = oxmq::Msg::from("there");
        reply.set_routing_id(m[0].routing_id()).unwrap();
        server.send(reply).await.unwrap();
        assert_eq!(client.recv().await.unwrap()[0], "there");
        assert_eq!(client.send(["a", "b"]).await.unwrap_err(), Error::Invalid, "CLIENT is single-part");

        let (mut gather, mut scatter) = pair(&ctx, SocketType::Gather, SocketType::Scatter, "tcp");
        scatter.send("s").await.unwrap();
        assert_eq!(gather.recv().await.unwrap()[0], "s");

        let (mut c1, mut c2) = pair(&ctx, SocketType::Channel, SocketType::Channel, "inproc");
        c2.send("c").await.unwrap();
        assert_eq!(c1.recv().await.unwrap()[0], "c");

        // PUB/SUB and XPUB/XSUB: the subscription reaches the publisher before it sends.
        let (mut xpub, mut sub) = pair(&ctx, SocketType::XPub, SocketType::Sub, "tcp");
        sub.subscribe("w").unwrap();
        assert_eq!(xpub.recv().await.unwrap()[0], b"\x01w");
        xpub.send("weather").await.unwrap();
        xpub.send("other").await.unwrap();
        xpub.send("wind").await.unwrap();
        assert_eq!(sub.recv().await.unwrap()[0], "weather");
        assert_eq!(sub.recv().await.unwrap()[0], "wind");
        let (mut xsub, mut publ) = pair(&ctx, SocketType::XSub, SocketType::Pub, "inproc");
        xsub.send(&b"\x01"[..]).await.unwrap();
        // The subscription travels in the pipe: PUB sees it at its next call.
        loop {
            publ.send("all").await.unwrap();
            match futures::future::select(Box::pin(xsub.recv()), Box::pin(sleep(Duration::from_millis(5)))).await {
                futures::future::Either::Left((m, _)) => {
                    assert_eq!(m.unwrap()[0], "all");
                    break;
                }
                futures::future::Either::Right(_) => continue,
            }
        }

        // PEER: routing ids from connect_peer.
        let mut p1 = AsyncSocket::new(&ctx, SocketType::Peer).unwrap();
        p1.bind("tcp://127.0.0.1:*").unwrap();
        let ep = p1.last_endpoint().unwrap();
        let mut p2 = AsyncSocket::new(&ctx, SocketType::Peer).unwrap();
        let to = p2.get_mut().connect_peer(&ep).unwrap();
        let mut hello = oxmq::Msg::from("peer");
        hello.set_routing_id(to).unwrap();
        p2.send(hello).await.unwrap();
        assert_eq!(p1.recv().await.unwrap()[0], "peer");

        // RADIO/DISH over udp: the DISH joins; datagrams may be lost, so send until one lands.
        let mut dish = AsyncSocket::new(&ctx, SocketType::Dish).unwrap();
        dish.bind("udp://127.0.0.1:*").unwrap();
        let ep = dish.last_endpoint().unwrap();
        dish.join("g").unwrap();
        let mut radio = AsyncSocket::new(&ctx, SocketType::Radio).unwrap();
        radio.connect(&ep).unwrap();
        loop {
            radio.send_group("g", "r").await.unwrap();
            match futures::future::select(Box::pin(dish.recv_group()), Box::pin(sleep(Duration::from_millis(5)))).await {
                futures::future::Either::Left((r, _)) => {
                    let (g, m) = r.unwrap();
                    assert_eq!((&g[..], m.as_slice()), (&b"g"[..], &b"r"[..]));
                    break;
                }
                futures::future::Either::Right(_) => continue,
            }
        }

        // DGRAM: [address, body] messages over udp.
        let mut d1 = AsyncSocket::new(&ctx, SocketType::Dgram).unwrap();
        d1.bind("udp://127.0.0.1:*").unwrap();
        let to = d1.last_endpoint().unwrap().trim_start_matches("udp://").to_string();
        let mut d2 = AsyncSocket::new(&ctx, SocketType::Dgram).unwrap();
        d2.bind("udp://127.0.0.1:*").unwrap();
        loop {
            d2.send([to.as_str(), "datagram"]).await.unwrap();
            match futures::future::select(Box::pin(d1.recv()), Box::pin(sleep(Duration::from_millis(5)))).await {
                futures::future::Either::Left((r, _)) => {
                    let m = r.unwrap();
                    assert_eq!(m.len(), 2);
                    assert_eq!(m[1], "datagram");
                    break;
                }
                futures::future::Either::Right(_) => continue,
            }
        }

        // STREAM: raw bytes with a peer id frame, to a plain tcp client.
        let mut stream = AsyncSocket::new(&ctx, SocketType::Stream).unwrap();
        stream.bind("tcp://127.0.0.1:*").unwrap();
        let addr = stream.last_endpoint().unwrap().trim_start_matches("tcp://").to_string();
        let client = std::thread::spawn(move || {
            use std::io::{Read, Write};
            let mut c = std::net::TcpStream::connect(addr).unwrap();
            c.write_all(b"raw").unwrap();
            let mut buf = [0u8; 5];
            c.read_exact(&mut buf).unwrap();
            buf
        });
        let mut got = Vec::new();
        let mut id = None;
        while got.len() < 3 {
            let mut m = stream.recv().await.unwrap();
            id = m.pop_front();
            got.extend_from_slice(&m[0]);
        }
        assert_eq!(got, b"raw");
        stream.send(Message::from(id.unwrap()).with("reply")).await.unwrap();
        let reply = blocking_join(client).await;
        assert_eq!(&reply, b"reply");
    });
}

/// Joins a thread without blocking the executor: a channel the thread completes.
async fn blocking_join<T: Send + 'static>(t: std::thread::JoinHandle<T>) -> T {
    let (tx, rx) = futures::channel::oneshot::channel();
    std::thread::spawn(move || {
        let _ = tx.send(t.join().unwrap());
    });
    rx.await.unwrap()
}

#[test]
fn a_dropped_receive_future_loses_no_message() {
    on_every_executor(|| async {
        let ctx = Context::new();
        let (mut pull, mut push) = pair(&ctx, SocketType::Pull, SocketType::Push, "tcp");
        const N: u32 = 300;
        let sender = async move {
            for i in 0..N {
                push.send([i.to_be_bytes().to_vec(), b"tail".to_vec()]).await.unwrap();
                if i % 7 == 0 {
                    // Longer than the receiver's timer even where timers round up to a
                    // millisecond (tokio's), so that timer wins during every pause.
                    sleep(Duration::from_millis(3)).await;
                }
            }
            push
        };
        let receiver = async move {
            let mut next = 0u32;
            let mut cancelled = 0u32;
            while next < N {
                // A receive racing a short timer: the timer often wins, dropping the receive.
                let recv = pull.recv();
                let tick = sleep(Duration::from_micros(50));
                futures::pin_mut!(recv);
                futures::pin_mut!(tick);
                match futures::future::select(recv, tick).await {
                    futures::future::Either::Left((m, _)) => {
                        let m = m.unwrap();
                        assert_eq!(m.len(), 2, "whole");
                        assert_eq!(m[0], &next.to_be_bytes(), "in order, none lost");
                        next += 1;
                    }
                    futures::future::Either::Right(_) => cancelled += 1,
                }
            }
            cancelled
        };
        let (_push, cancelled) = futures::join!(sender, receiver);
        assert!(cancelled > 0, "the test dropped receive futures");
    });
}

#[test]
fn a_dropped_send_future_sends_whole_or_nothing() {
    on_every_executor(|| async {
        let ctx = Context::new();
        let mut pull = AsyncSocket::new(&ctx, SocketType::Pull).unwrap();
        pull.set_int(opt::RCVHWM, 1).unwrap();
        pull.bind("inproc://asynch-send-cancel").unwrap();
        let mut push = AsyncSocket::new(&ctx, SocketType::Push).unwrap();
        push.set_int(opt::SNDHWM, 1).unwrap();
        push.connect("inproc://asynch-send-cancel").unwrap();
        // Fill the pipe, then a send must wait: polled once and dropped, it sent nothing.
        let mut sent = 0u32;
        loop {
            let f = push.send([sent.to_be_bytes().to_vec(), vec![7u8; 3]]);
            futures::pin_mut!(f);
            match futures::poll!(f) {
                std::task::Poll::Ready(r) => {
                    r.unwrap();
                    sent += 1;
                }
                std::task::Poll::Pending => break,
            }
        }
        assert!(sent >= 1);
        // Now race sends against a timer while the receiver drains slowly: each message that
        // arrives was completed, whole; each dropped send never arrives.
        let mut completed: Vec<u32> = (0..sent).collect();
        let mut next = sent;
        let mut dropped = 0;
        let mut got = Vec::new();
        while got.len() < 200 {
            let f = push.send([next.to_be_bytes().to_vec(), vec![7u8; 3]]);
            let tick = sleep(Duration::from_micros(100));
            futures::pin_mut!(f);
            futures::pin_mut!(tick);
            match futures::future::select(f, tick).await {
                futures::future::Either::Left((r, _)) => {
                    r.unwrap();
                    completed.push(next);
                }
                futures::future::Either::Right(_) => dropped += 1,
            }
            next += 1;
            if next.is_multiple_of(3) {
                // Read one: room for one more send.
                let m = pull.recv().await.unwrap();
                assert_eq!(m.len(), 2, "whole");
                assert_eq!(m[1], &[7u8; 3]);
                got.push(u32::from_be_bytes(m[0][..].try_into().unwrap()));
            }
        }
        while got.len() < completed.len() {
            let m = pull.recv().await.unwrap();
            got.push(u32::from_be_bytes(m[0][..].try_into().unwrap()));
        }
        assert_eq!(got, completed, "exactly the completed sends, in order");
        assert!(dropped > 0, "the test dropped send futures");
        let extra = futures::future::select(Box::pin(pull.recv()), Box::pin(sleep(Duration::from_millis(20)))).await;
        assert!(matches!(extra, futures::future::Either::Right(_)), "no dropped send arrived");
    });
}

#[test]
fn tokio_select_and_timeout() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let ctx = Context::new();
        let (mut a, mut b) = pair(&ctx, SocketType::Pull, SocketType::Push, "tcp");
        let (mut c, mut d) = pair(&ctx, SocketType::Pull, SocketType::Push, "inproc");
        assert!(tokio::time::timeout(Duration::from_millis(20), a.recv()).await.is_err());
        tokio::spawn(async move {
            for i in 0..100u8 {
                b.send(vec![i]).await.unwrap();
                d.send(vec![i + 100]).await.unwrap();
            }
            (b, d)
        });
        let (mut from_a, mut from_c) = (Vec::new(), Vec::new());
        while from_a.len() + from_c.len() < 200 {
            tokio::select! {
                m = a.recv() => from_a.push(m.unwrap()[0][0]),
                m = c.recv() => from_c.push(m.unwrap()[0][0]),
                _ = tokio::time::sleep(Duration::from_secs(10)) => panic!("stalled"),
            }
        }
        assert_eq!(from_a, (0..100).collect::<Vec<u8>>());
        assert_eq!(from_c, (100..200).collect::<Vec<u8>>());
    });
}

#[test]
fn stream_and_sink() {
    on_every_executor(|| async {
        let ctx = Context::new();
        let (mut pull, mut push) = pair(&ctx, SocketType::Pull, SocketType::Push, "tcp");
        push.set_int(opt::SNDHWM, 10).unwrap();
        let sender = async move {
            let mut items = futures::stream::iter((0..1000u32).map(|i| Ok::<_, Error>(Message::from(i.to_be_bytes().to_vec()))));
            push.send_all(&mut items).await.unwrap();
            push.close().await.unwrap();
            push
        };
        let receiver = async move {
            let got: Vec<u32> =
                (&mut pull).take(1000).map(|m| u32::from_be_bytes(m.unwrap()[0][..].try_into().unwrap())).collect().await;
            assert_eq!(got, (0..1000).collect::<Vec<u32>>());
            pull
        };
        futures::join!(sender, receiver);
    });
}

#[test]
fn split_halves_in_two_tasks() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let ctx = Context::new();
        let (mut echo, dealer) = pair(&ctx, SocketType::Pair, SocketType::Pair, "tcp");
        tokio::spawn(async move {
            while let Some(m) = echo.next().await {
                echo.send(m.unwrap()).await.unwrap();
            }
        });
        let (mut tx, mut rx) = dealer.split::<Message>();
        let reader = tokio::spawn(async move {
            let mut n = 0u32;
            while n < 500 {
                let m = rx.next().await.unwrap().unwrap();
                assert_eq!(m[0], &n.to_be_bytes());
                n += 1;
            }
        });
        for i in 0..500u32 {
            tx.send(Message::from(i.to_be_bytes().to_vec())).await.unwrap();
        }
        tokio::time::timeout(Duration::from_secs(20), reader).await.unwrap().unwrap();
    });
}

#[test]
fn blocking_and_async_sockets_share_a_context() {
    on_every_executor(|| async {
        let ctx = Context::new();
        let mut pull = AsyncSocket::new(&ctx, SocketType::Pull).unwrap();
        let ep = format!("inproc://shared-{}", unique());
        pull.bind(&ep).unwrap();
        let c2 = ctx.clone();
        let t = std::thread::spawn(move || {
            let mut push = c2.socket(SocketType::Push).unwrap();
            push.connect(&ep).unwrap();
            for i in 0..100u8 {
                push.send_multipart([vec![i], vec![i, i]], 0).unwrap();
            }
        });
        for i in 0..100u8 {
            assert_eq!(bodies(&pull.recv().await.unwrap()), [vec![i], vec![i, i]]);
        }
        blocking_join(t).await;
        // And back to blocking.
        let mut blocking = pull.into_inner();
        assert_eq!(blocking.recv(opt::DONTWAIT).unwrap_err(), Error::Again);
    });
}

#[test]
fn shutdown_ends_the_stream() {
    on_every_executor(|| async {
        let ctx = Context::new();
        let mut sub = AsyncSocket::new(&ctx, SocketType::Sub).unwrap();
        sub.subscribe("").unwrap();
        {
            let next = sub.next();
            futures::pin_mut!(next);
            assert!(futures::poll!(next.as_mut()).is_pending());
            ctx.shutdown();
            assert!(next.await.is_none(), "the pending receive was woken and the stream ended");
        }
        assert_eq!(sub.recv().await.unwrap_err(), Error::Term);
    });
}

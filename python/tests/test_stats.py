"""oxmq's counters (sock.stats()) and level-triggered FD readiness (OXMQ_FD_LEVEL)."""
import select

import oxmq as zmq


def test_pub_drops_at_hwm_are_counted_exactly():
    ctx = zmq.Context()
    pub = ctx.socket(zmq.PUB)
    sub = ctx.socket(zmq.SUB)
    pub.setsockopt(zmq.SNDHWM, 10)
    sub.setsockopt(zmq.RCVHWM, 5)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    pub.bind("inproc://py-stats-pub")
    sub.connect("inproc://py-stats-pub")
    for _ in range(100):
        pub.send(b"12345")
    st = pub.stats()
    assert (st["msgs_out"], st["bytes_out"], st["dropped_hwm"], st["peers"]) == (100, 500, 85, 1)
    assert st["peer_queues"] == [(15, None)]
    assert (st["dropped_malformed"], st["dropped_unsendable"]) == (0, 0)
    for _ in range(15):
        sub.recv()
    st = sub.stats()
    assert (st["msgs_in"], st["bytes_in"]) == (15, 75)
    pub.close(0)
    sub.close(0)
    ctx.term()


def test_level_fd_in_a_select_loop():
    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    push = ctx.socket(zmq.PUSH)
    pull.bind("inproc://py-level")
    push.connect("inproc://py-level")
    pull.setsockopt(zmq.OXMQ_FD_LEVEL, zmq.POLLIN)
    assert pull.getsockopt(zmq.OXMQ_FD_LEVEL) == zmq.POLLIN
    for i in range(5):
        push.send(b"%d" % i)
    got = []
    while len(got) < 5:
        r, _, _ = select.select([pull.fd], [], [], 5)
        assert r, "no wake-up with a message waiting"
        try:
            got.append(pull.recv(zmq.DONTWAIT))  # one per wake-up
        except zmq.Again:
            pass  # a peer event without a message: at most one such look
    assert got == [b"0", b"1", b"2", b"3", b"4"]
    assert select.select([pull.fd], [], [], 0.05)[0] == []
    pull.close(0)
    push.close(0)
    ctx.term()


def test_a_waiting_recv_reads_its_connection_itself():
    # The direct receive path: a Python recv that has to wait reads the tcp connection on its
    # own thread (one wake-up per message), and the counter says so.
    import threading

    ctx = zmq.Context()
    rep = ctx.socket(zmq.REP)
    req = ctx.socket(zmq.REQ)
    for s in (rep, req):
        s.rcvtimeo = 5000
        # A one-second spin window outlasts every reply, so waits catch input while polling.
        s.setsockopt(zmq.OXMQ_RECV_SPIN, 1_000_000)
    assert req.getsockopt(zmq.OXMQ_RECV_SPIN) == 1_000_000
    port = rep.bind_to_random_port("tcp://127.0.0.1")
    req.connect("tcp://127.0.0.1:%d" % port)

    def serve():
        for _ in range(200):
            rep.send(rep.recv())

    t = threading.Thread(target=serve)
    t.start()
    for i in range(200):
        req.send(b"%d" % i)
        assert req.recv() == b"%d" % i
    t.join(10)
    assert req.stats()["direct_reads"] + rep.stats()["direct_reads"] > 0
    assert req.stats()["spun_waits"] + rep.stats()["spun_waits"] > 0
    req.close(0)
    rep.close(0)
    ctx.term()


def test_a_stream_held_at_the_hwm_is_resumed_by_the_reader():
    # The sender runs ahead of a receiver with a small RCVHWM, so the connection stops at
    # the HWM again and again; reading the queue down resumes it on the reading thread.
    import threading

    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    pull.rcvhwm = 8
    pull.rcvtimeo = 10000
    port = pull.bind_to_random_port("tcp://127.0.0.1")
    push = ctx.socket(zmq.PUSH)
    push.connect("tcp://127.0.0.1:%d" % port)

    def send():
        for i in range(20000):
            push.send(b"%d" % i)

    t = threading.Thread(target=send)
    t.start()
    for i in range(20000):
        assert pull.recv() == b"%d" % i
    t.join(10)
    assert pull.stats()["direct_resumes"] > 0
    push.close(0)
    pull.close(0)
    ctx.term()

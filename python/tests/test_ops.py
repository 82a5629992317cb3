"""Operating oxmq from Python: connects that follow DNS (OXMQ_DNS_FOLLOW), the socket's metrics
name (OXMQ_NAME), Context.metrics() and the OXMQ_METRICS_ADDR endpoint. Name changes and
faults between hosts are tested in scripts/test.d/90-hosts.sh."""
import os
import socket as pysocket
import subprocess
import sys
import textwrap
import time
import urllib.request

import pytest

import oxmq as zmq


def test_follow_options_and_a_followed_name():
    ctx = zmq.Context()
    pull = ctx.socket(zmq.PULL)
    port = pull.bind_to_random_port("tcp://127.0.0.1")
    push = ctx.socket(zmq.PUSH)
    assert push.getsockopt(zmq.OXMQ_DNS_FOLLOW) == 0
    assert push.oxmq_dns_ivl == 30000
    with pytest.raises(zmq.ZMQError) as e:
        push.setsockopt(zmq.OXMQ_DNS_FOLLOW, 2)
    assert e.value.errno == zmq.EINVAL
    push.oxmq_dns_follow = 1
    push.oxmq_dns_ivl = 1000
    push.connect(f"tcp://localhost:{port}")  # a name: every address it has, followed
    pull.rcvtimeo = 5000
    for i in range(10):
        push.send(b"%d" % i)
    assert sorted(int(pull.recv()) for _ in range(10)) == list(range(10))
    st = push.stats()
    assert (st["msgs_out"], st["peers"], st["dropped_vanished"]) == (10, 1, 0)
    assert "hwm_reached" in st and "dropped_disconnected" in st
    push.disconnect(f"tcp://localhost:{port}")
    push.close(0)
    pull.close(0)
    ctx.term()


def test_name_option_and_metrics_text():
    ctx = zmq.Context()
    pub = ctx.socket(zmq.PUB)
    pub.set_string(zmq.OXMQ_NAME, "prices")
    assert pub.get_string(zmq.OXMQ_NAME) == "prices"
    with pytest.raises(zmq.ZMQError):
        pub.setsockopt(zmq.OXMQ_NAME, b"not a label")
    pub.bind("inproc://py-ops-metrics")
    subs = []
    for _ in range(2):
        s = ctx.socket(zmq.SUB)
        s.connect("inproc://py-ops-metrics")
        s.setsockopt(zmq.SUBSCRIBE, b"")
        subs.append(s)
    # PUB takes the subscriptions when it is used; this thread owns it, so it asks without
    # waiting and reads what the socket published at its next call.
    for _ in range(3):
        pub.send(b"tick")
    ctx.metrics(timeout=0)
    pub.stats()
    text = ctx.metrics(timeout=0)
    labels = '{type="PUB",name="prices",endpoint="inproc://py-ops-metrics"}'
    assert f"oxmq_socket_sent_messages_total{labels} 3\n" in text, text
    assert f"oxmq_socket_subscribers{labels} 2\n" in text
    assert "# TYPE oxmq_socket_sent_messages_total counter" in text
    om = ctx.metrics(timeout=0, openmetrics=True)
    assert om.endswith("# EOF\n") and "# TYPE oxmq_socket_sent_messages counter" in om
    for s in subs:
        s.close(0)
    pub.close(0)
    ctx.term()


def _free_port():
    s = pysocket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_metrics_endpoint_from_the_environment():
    """A process with OXMQ_METRICS_ADDR serves GET /metrics; its socket answers while it
    waits in recv."""
    port = _free_port()
    child = textwrap.dedent(
        """
        import sys, oxmq as zmq
        ctx = zmq.Context()
        pull = ctx.socket(zmq.PULL)
        pull.oxmq_name = "work"
        pull.bind("inproc://py-ops-env")
        push = ctx.socket(zmq.PUSH)
        push.connect("inproc://py-ops-env")
        for _ in range(4):
            push.send(b"job")
        for _ in range(4):
            pull.recv()
        print("ready", flush=True)
        pull.rcvtimeo = 20000
        try:
            pull.recv()          # waits here while the test scrapes
        except zmq.Again:
            pass
        """
    )
    env = dict(os.environ, OXMQ_METRICS_ADDR=f"127.0.0.1:{port}")
    p = subprocess.Popen([sys.executable, "-c", child], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 10
        body = ""
        want = 'oxmq_socket_received_messages_total{type="PULL",name="work",endpoint="inproc://py-ops-env"} 4\n'
        while want not in body:
            assert time.monotonic() < deadline, body
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
                    body = r.read().decode()
            except OSError:
                time.sleep(0.05)  # the child is still starting its endpoint: poll again
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=5)
        assert e.value.code == 404
    finally:
        p.kill()
        p.wait()

"""The issue's Python snippet with only the import line changed (``from oxmq import wiring as
pyzmq`` for the seed's ``import pyzmq``), on the embedded name service."""
from oxmq import wiring as pyzmq

hostname = ""
msg = b"snippet"
# ---- the snippet ----
zmq = pyzmq.ZMQ(hostname)
eid = zmq.create_exchange("E", pyzmq.SCOPE_GLOBAL, "")
zmq.create_queue("Q", pyzmq.SCOPE_LOCAL)
zmq.bind("E", "Q"); zmq.send(eid, msg); msg = zmq.receive()
# ---- end ----
assert msg == b"snippet", msg
zmq.close()
print("snippet.py: ok")

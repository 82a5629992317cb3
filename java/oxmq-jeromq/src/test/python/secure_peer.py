"""libzmq peer (through pyzmq) for the Java interop tests: the same key=value arguments,
output ("READY <endpoint>", "RESULT <result>") and exit status as guide/SecurePeer.java run by
guide.Run, so one test drives either peer. A server authenticates with pyzmq's
ThreadAuthenticator (PLAIN admin/secret; CURVE any key, or the certificates in allow=DIR)."""
import sys

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator


def main():
    a = dict(arg.split("=", 1) for arg in sys.argv[1:])
    server = a["role"] == "server"
    mech = a["mech"]
    timeout = int(a["timeout"])
    ctx = zmq.Context()
    auth = None
    sock = ctx.socket(zmq.REP if server else zmq.REQ)
    sock.linger = 0
    sock.rcvtimeo = timeout
    sock.sndtimeo = timeout
    if server and mech != "null":
        auth = ThreadAuthenticator(ctx)
        auth.start()
        auth.allow("127.0.0.1")
        sock.zap_domain = b"global"
    if mech == "plain":
        if server:
            # pyzmq keys password tables by the exact ZAP domain ("*" is no wildcard there).
            auth.configure_plain(domain="global", passwords={"admin": "secret"})
            sock.plain_server = True
        else:
            sock.plain_username = a["user"].encode()
            sock.plain_password = a["password"].encode()
    elif mech == "curve":
        if server:
            auth.configure_curve(domain="*", location=a.get("allow", zmq.auth.CURVE_ALLOW_ANY))
            sock.curve_publickey = a["spub"].encode()
            sock.curve_secretkey = a["ssec"].encode()
            sock.curve_server = True
        else:
            sock.curve_publickey = a["cpub"].encode()
            sock.curve_secretkey = a["csec"].encode()
            sock.curve_serverkey = a["spub"].encode()
    if a["mode"] == "bind":
        sock.bind(a["endpoint"])
        print("READY", sock.getsockopt_string(zmq.LAST_ENDPOINT), flush=True)
    else:
        sock.connect(a["endpoint"])
        print("READY", a["endpoint"], flush=True)
    result = "OK"
    try:
        for i in range(int(a["n"])):
            if server:
                request = sock.recv_string()
                sock.send_string("echo:" + request)
            else:
                request = f"request {i} over {mech}"
                sock.send_string(request)
                reply = sock.recv_string()
                if reply != "echo:" + request:
                    result = "BAD REPLY " + reply
                    break
    except zmq.Again:
        result = "TIMEOUT"
    sock.close()
    if auth is not None:
        auth.stop()
    ctx.term()
    print("RESULT", result, flush=True)
    sys.exit(0 if result == "OK" else 3)


if __name__ == "__main__":
    main()

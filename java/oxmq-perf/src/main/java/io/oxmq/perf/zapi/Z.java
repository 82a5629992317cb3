package io.oxmq.perf.zapi;

import org.zeromq.ZMQ;

import java.lang.reflect.Method;

/**
 * The perf tools on the org.zeromq API subset that JeroMQ and jzmq share, so one set of class
 * files measures JeroMQ, jzmq and oxmq-jeromq: the hot calls ({@code send(byte[],int,int,int)},
 * {@code recv(byte[],int,int,int)}) have the same signature in all of them; bind and connect
 * return boolean in JeroMQ and void in jzmq, so they are called reflectively (once per run).
 */
final class Z {
    private Z() {}

    static void bind(ZMQ.Socket s, String ep) {
        call(s, "bind", ep);
    }

    static void connect(ZMQ.Socket s, String ep) {
        call(s, "connect", ep);
    }

    private static void call(ZMQ.Socket s, String name, String ep) {
        try {
            Method m = s.getClass().getMethod(name, String.class);
            Object r = m.invoke(s, ep);
            if (Boolean.FALSE.equals(r)) throw new IllegalStateException(name + " " + ep + " failed");
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(name + " " + ep, e);
        }
    }
}

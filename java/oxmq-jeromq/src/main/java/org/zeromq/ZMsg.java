package org.zeromq;

import java.util.ArrayDeque;

/**
 * A multipart message, as JeroMQ's ZMsg: a deque of {@link ZFrame}s with send and receive.
 */
public class ZMsg extends ArrayDeque<ZFrame> {
    private static final long serialVersionUID = 1L;

    /** An empty message. */
    public ZMsg() {
    }

    /** A message of the given strings, one frame each. */
    public static ZMsg newStringMsg(String... strings) {
        ZMsg m = new ZMsg();
        for (String s : strings) m.addString(s);
        return m;
    }

    /** Receives a whole message, blocking; {@code null} on timeout or interruption. */
    public static ZMsg recvMsg(ZMQ.Socket socket) {
        return recvMsg(socket, 0);
    }

    /** Receives a whole message; {@code null} when nothing came. */
    public static ZMsg recvMsg(ZMQ.Socket socket, boolean wait) {
        return recvMsg(socket, wait ? 0 : ZMQ.DONTWAIT);
    }

    /** Receives a whole message; {@code null} when nothing came. */
    public static ZMsg recvMsg(ZMQ.Socket socket, int flags) {
        ZMsg m = new ZMsg();
        for (;;) {
            ZFrame f = ZFrame.recvFrame(socket, m.isEmpty() ? flags : 0);
            if (f == null) return m.isEmpty() ? null : m;
            m.add(f);
            if (!f.hasMore()) return m;
        }
    }

    /** Sends all frames and empties the message. */
    public boolean send(ZMQ.Socket socket) {
        return send(socket, true);
    }

    /** Sends all frames; empties the message when {@code destroy}. */
    public boolean send(ZMQ.Socket socket, boolean destroy) {
        int n = size(), i = 0;
        boolean ok = true;
        for (ZFrame f : this) {
            ok = f.send(socket, (++i < n ? ZFrame.MORE : 0) | ZFrame.REUSE) && ok;
        }
        if (destroy) destroy();
        return ok;
    }

    /** Sends and destroys. */
    public boolean sendAndDestroy(ZMQ.Socket socket) {
        return send(socket, true);
    }

    /** Sends and keeps. */
    public boolean sendAndKeep(ZMQ.Socket socket) {
        return send(socket, false);
    }

    /** Empties the message. */
    public void destroy() {
        clear();
    }

    /** Total bytes of all frames. */
    public long contentSize() {
        long n = 0;
        for (ZFrame f : this) n += f.size();
        return n;
    }

    /** Appends a string frame. */
    public boolean addString(String s) {
        return add(new ZFrame(s));
    }

    /** Appends a string frame. */
    public boolean add(String s) {
        return add(new ZFrame(s));
    }

    /** Appends a frame of {@code data}. */
    public boolean add(byte[] data) {
        return add(new ZFrame(data));
    }

    /** Appends a string frame and returns this message. */
    public ZMsg append(String s) {
        add(s);
        return this;
    }

    /** Appends a frame of {@code data} and returns this message. */
    public ZMsg append(byte[] data) {
        add(data);
        return this;
    }

    /** Prepends a string frame. */
    public void push(String s) {
        push(new ZFrame(s));
    }

    /** Prepends a frame. */
    public void push(byte[] data) {
        push(new ZFrame(data));
    }

    /** Prepends a string frame. */
    public void addFirst(String s) {
        addFirst(new ZFrame(s));
    }

    /** Prepends a frame of data. */
    public void addFirst(byte[] data) {
        addFirst(new ZFrame(data));
    }

    /** Appends a string frame. */
    public void addLast(String s) {
        addLast(new ZFrame(s));
    }

    /** Appends a frame of data. */
    public void addLast(byte[] data) {
        addLast(new ZFrame(data));
    }

    /** Removes the first frame and returns it as a string ({@code null} when empty). */
    public String popString() {
        ZFrame f = pollFirst();
        return f == null ? null : f.getString(ZMQ.CHARSET);
    }

    /** Pushes {@code frame} and an empty delimiter in front. */
    public void wrap(ZFrame frame) {
        if (frame != null) {
            push(new ZFrame(new byte[0]));
            push(frame);
        }
    }

    /** Pops the first frame, and the empty delimiter after it if there is one. */
    public ZFrame unwrap() {
        if (isEmpty()) return null;
        ZFrame f = pop();
        ZFrame empty = peekFirst();
        if (empty != null && empty.size() == 0) pop();
        return f;
    }

    /** A deep copy. */
    public ZMsg duplicate() {
        ZMsg m = new ZMsg();
        for (ZFrame f : this) m.add(f.duplicate());
        return m;
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("[");
        boolean first = true;
        for (ZFrame f : this) {
            if (!first) b.append(", ");
            b.append(f);
            first = false;
        }
        return b.append(']').toString();
    }
}

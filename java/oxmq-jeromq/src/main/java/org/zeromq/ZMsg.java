package org.zeromq;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.function.Consumer;

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

    /** Receives a whole message and hands it to {@code handler} (not called when nothing came). */
    public static void recvMsg(ZMQ.Socket socket, int flags, Consumer<ZMsg> handler) {
        ZMsg m = recvMsg(socket, flags);
        if (m != null) handler.accept(m);
    }

    /** As {@link #recvMsg(ZMQ.Socket, int, Consumer)}; a failure goes to {@code exceptionHandler}. */
    public static void recvMsg(ZMQ.Socket socket, int flags, Consumer<ZMsg> handler,
            Consumer<ZMQException> exceptionHandler) {
        try {
            recvMsg(socket, flags, handler);
        } catch (ZMQException e) {
            exceptionHandler.accept(e);
        }
    }

    /** Writes {@code msg} to {@code out}: the frame count, then each frame's size and bytes (ints
     *  big-endian, as JeroMQ's). False on an I/O error or a null message. */
    public static boolean save(ZMsg msg, DataOutputStream out) {
        if (msg == null) return false;
        try {
            out.writeInt(msg.size());
            for (ZFrame f : msg) {
                out.writeInt(f.size());
                out.write(f.getData());
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Reads a message {@link #save} wrote; {@code null} on an I/O error or a truncated input. */
    public static ZMsg load(DataInputStream in) {
        if (in == null) return null;
        try {
            int n = in.readInt();
            ZMsg m = new ZMsg();
            for (int i = 0; i < n; i++) {
                byte[] data = new byte[in.readInt()];
                in.readFully(data);
                m.add(new ZFrame(data));
            }
            return m;
        } catch (IOException | NegativeArraySizeException e) {
            return null;
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

    /** Appends a string frame; returns this message. */
    public ZMsg addString(String s) {
        add(new ZFrame(s));
        return this;
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

    /** Appends the frames of {@code other} (not copies) and returns this message. */
    public ZMsg append(ZMsg other) {
        if (other != null) addAll(other);
        return this;
    }

    /** Prepends a string frame; returns this message. */
    public ZMsg push(String s) {
        push(new ZFrame(s));
        return this;
    }

    /** Prepends a frame; returns this message. */
    public ZMsg push(byte[] data) {
        push(new ZFrame(data));
        return this;
    }

    /** Prepends a string frame; returns this message. */
    public ZMsg addFirst(String s) {
        addFirst(new ZFrame(s));
        return this;
    }

    /** Prepends a frame of data; returns this message. */
    public ZMsg addFirst(byte[] data) {
        addFirst(new ZFrame(data));
        return this;
    }

    /** Appends a string frame; returns this message. */
    public ZMsg addLast(String s) {
        addLast(new ZFrame(s));
        return this;
    }

    /** Appends a frame of data; returns this message. */
    public ZMsg addLast(byte[] data) {
        addLast(new ZFrame(data));
        return this;
    }

    /** Removes the first frame and returns it as a string ({@code null} when empty). */
    public String popString() {
        ZFrame f = pollFirst();
        return f == null ? null : f.getString(ZMQ.CHARSET);
    }

    /** Pushes {@code frame} and an empty delimiter in front; returns this message. */
    public ZMsg wrap(ZFrame frame) {
        if (frame != null) {
            push(new ZFrame(new byte[0]));
            push(frame);
        }
        return this;
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

    /** Prints the frames to standard output (JeroMQ's debugging aid); returns this message. */
    public ZMsg dump() {
        dump(System.out);
        return this;
    }

    /** Writes the frames, one line each with its size, to {@code out}; returns this message. */
    public ZMsg dump(Appendable out) {
        try {
            out.append("--------------------------------------\n");
            for (ZFrame f : this) {
                out.append(String.format("[%03d] %s%n", f.size(), f));
            }
            if (out instanceof java.io.Flushable) ((java.io.Flushable) out).flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Equal when both hold equal frames in the same order (as JeroMQ's). */
    @Override
    public boolean equals(Object o) {
        if (this == o) return true;
        if (!(o instanceof ZMsg)) return false;
        ZMsg other = (ZMsg) o;
        if (size() != other.size()) return false;
        java.util.Iterator<ZFrame> a = iterator(), b = other.iterator();
        while (a.hasNext()) {
            if (!a.next().equals(b.next())) return false;
        }
        return true;
    }

    @Override
    public int hashCode() {
        int h = 1;
        for (ZFrame f : this) h = 31 * h + f.hashCode();
        return h;
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

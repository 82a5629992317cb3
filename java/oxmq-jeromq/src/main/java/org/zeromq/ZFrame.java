package org.zeromq;

import java.util.Arrays;

/** One frame of a multipart message, as JeroMQ's ZFrame (a byte array and a "more" flag). */
public class ZFrame {
    /** Send flag: more frames follow. */
    public static final int MORE = ZMQ.SNDMORE;
    /** Send flag: keep the frame after sending. */
    public static final int REUSE = 128;
    /** Send flag: do not block. */
    public static final int DONTWAIT = ZMQ.DONTWAIT;

    private byte[] data;
    private boolean more;
    /** SERVER, PEER: the peer it came from or goes to (0: none). */
    private int routingId;
    /** RADIO, DISH: the group it came in or goes to (null: none). */
    private String group;

    /** A frame with no data. */
    protected ZFrame() {
    }

    /** A frame holding {@code data} (not copied). */
    public ZFrame(byte[] data) {
        this.data = data;
    }

    /** A frame holding the UTF-8 bytes of {@code data}. */
    public ZFrame(String data) {
        this.data = data.getBytes(ZMQ.CHARSET);
    }

    /** The data. */
    public byte[] getData() {
        return data;
    }

    /** The data. */
    public byte[] data() {
        return data;
    }

    /** Replaces the data. */
    public void reset(byte[] data) {
        this.data = data;
    }

    /** Replaces the data with a string's bytes. */
    public void reset(String data) {
        this.data = data.getBytes(ZMQ.CHARSET);
    }

    /** The size in bytes. */
    public int size() {
        return data == null ? 0 : data.length;
    }

    /** Whether data is present. */
    public boolean hasData() {
        return data != null;
    }

    /** Whether more frames followed this received one. */
    public boolean hasMore() {
        return more;
    }

    /** SERVER, PEER (draft): the peer this frame came from, or the one to send it to; 0 when none. */
    public int getRoutingId() {
        return routingId;
    }

    /** Addresses the frame to a SERVER's or PEER's peer. */
    public void setRoutingId(int routingId) {
        this.routingId = routingId;
    }

    /** RADIO, DISH (draft): the group this frame came in, or the one to send it to; null when none. */
    public String getGroup() {
        return group;
    }

    /** Sets the group a RADIO sends the frame to. */
    public void setGroup(String group) {
        this.group = group;
    }

    void received(boolean more, int routingId, String group) {
        this.more = more;
        this.routingId = routingId;
        this.group = group;
    }

    /** Sends the frame ({@link #MORE}, {@link #REUSE}, {@link #DONTWAIT}), to its routing id
     *  or group when it has one. */
    public boolean send(ZMQ.Socket socket, int flags) {
        byte[] d = data == null ? new byte[0] : data;
        int f = (flags & MORE) != 0 ? ZMQ.SNDMORE : 0;
        if ((flags & DONTWAIT) != 0) f |= ZMQ.DONTWAIT;
        boolean ok = socket.sendFrame(d, routingId, group, f);
        if (ok && (flags & REUSE) == 0) destroy();
        return ok;
    }

    /** Sends the frame and keeps it. */
    public boolean sendAndKeep(ZMQ.Socket socket, int flags) {
        return send(socket, flags | REUSE);
    }

    /** Sends the frame and keeps it. */
    public boolean sendAndKeep(ZMQ.Socket socket) {
        return sendAndKeep(socket, 0);
    }

    /** Sends the frame and destroys it. */
    public boolean sendAndDestroy(ZMQ.Socket socket, int flags) {
        return send(socket, flags);
    }

    /** Sends the frame and destroys it. */
    public boolean sendAndDestroy(ZMQ.Socket socket) {
        return send(socket, 0);
    }

    /** Receives a frame, blocking; {@code null} on timeout. */
    public static ZFrame recvFrame(ZMQ.Socket socket) {
        return recvFrame(socket, 0);
    }

    /** Receives a frame; {@code null} with DONTWAIT and nothing waiting, or on timeout. */
    public static ZFrame recvFrame(ZMQ.Socket socket, int flags) {
        SocketType t = socket.getSocketType();
        if (t == SocketType.SERVER || t == SocketType.PEER || t == SocketType.DISH) {
            return socket.recvFrame(flags);
        }
        byte[] d = socket.recv(flags);
        if (d == null) return null;
        ZFrame f = new ZFrame(d);
        f.more = socket.hasReceiveMore();
        return f;
    }

    /** A copy. */
    public ZFrame duplicate() {
        ZFrame f = new ZFrame(data == null ? null : data.clone());
        f.routingId = routingId;
        f.group = group;
        return f;
    }

    /** Drops the data. */
    public void destroy() {
        data = null;
    }

    /** Whether the data equal the UTF-8 bytes of {@code str}. */
    public boolean streq(String str) {
        return data != null && Arrays.equals(data, str.getBytes(ZMQ.CHARSET));
    }

    /** Whether the data has the UTF-8 bytes of {@code str}. */
    public boolean hasSameData(ZFrame other) {
        return other != null && Arrays.equals(data, other.data);
    }

    /** The data as a UTF-8 string. */
    public String getString(java.nio.charset.Charset charset) {
        return data == null ? "" : new String(data, charset);
    }

    /** The data in hexadecimal. */
    public String strhex() {
        StringBuilder b = new StringBuilder();
        if (data != null) for (byte x : data) b.append(String.format("%02X", x));
        return b.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ZFrame f && Arrays.equals(data, f.data);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(data);
    }

    /** The data as text when printable, else hexadecimal. */
    /** Prints the frame to standard output, after {@code prefix} when not null. */
    public void print(String prefix) {
        System.out.println((prefix == null ? "" : prefix) + "[" + String.format("%03d", size()) + "] " + this);
    }

    @Override
    public String toString() {
        if (data == null) return "";
        for (byte b : data) if (b < 32 || b > 126) return strhex();
        return new String(data, ZMQ.CHARSET);
    }
}

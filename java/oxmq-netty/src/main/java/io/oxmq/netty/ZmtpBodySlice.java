package io.oxmq.netty;

import io.netty.buffer.AbstractByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ScatteringByteChannel;

/**
 * The body of one incoming frame as a {@link ZmtpDecoder} sees it: a slice of the receive
 * buffer. Like any derived buffer it shares its parent's reference count: {@code retain()}
 * retains the parent, and a retained slice stays valid, pointing at its frame, until released.
 * One that was not retained is pointed at the next frame the codec reads, so that a frame costs
 * no new object; the decoder's contract (the body is valid during the call only) allows that.
 *
 * <p>Slices, duplicates and copies taken from it are taken from the parent, so they do not
 * follow this object to the next frame. Single values are read (and written) through a
 * {@link ByteBuffer} over the parent's memory, bulk copies through the parent itself.
 */
final class ZmtpBodySlice extends AbstractByteBuf {
  private ByteBuf parent;
  private int parentBase; // the body's first byte in parent
  private ByteBuffer mem; // parent's memory: index memBase is the body's first byte
  private int memBase;
  private int size;
  private boolean retained;

  ZmtpBodySlice() {
    super(0);
  }

  /**
   * Points this slice at {@code [start, start + length)} of {@code parent}, all readable.
   * {@code mem} is the parent's memory, its index {@code memZero} being the parent's index 0.
   */
  ZmtpBodySlice point(ByteBuf parent, ByteBuffer mem, int memZero, int start, int length) {
    this.parent = parent;
    this.parentBase = start;
    this.mem = mem;
    this.memBase = memZero + start;
    this.size = length;
    maxCapacity(length);
    clear();
    writerIndex(length);
    return this;
  }

  /** @return whether the decoder retained this slice: it is the decoder's now, not to be reused */
  boolean retained() {
    return retained;
  }

  private int at(int index) {
    return memBase + index;
  }

  /** @return the parent's index of {@code index}, after checking {@code length} bytes from it */
  private int parentIndex(int index, int length) {
    checkIndex(index, length);
    return parentBase + index;
  }

  // ---------------------------------------------------------------- single values

  @Override
  protected byte _getByte(int index) {
    return mem.get(at(index));
  }

  @Override
  protected short _getShort(int index) {
    return mem.getShort(at(index));
  }

  @Override
  protected short _getShortLE(int index) {
    return Short.reverseBytes(mem.getShort(at(index)));
  }

  @Override
  protected int _getUnsignedMedium(int index) {
    return (mem.get(at(index)) & 0xFF) << 16 | (mem.get(at(index + 1)) & 0xFF) << 8
        | mem.get(at(index + 2)) & 0xFF;
  }

  @Override
  protected int _getUnsignedMediumLE(int index) {
    return mem.get(at(index)) & 0xFF | (mem.get(at(index + 1)) & 0xFF) << 8
        | (mem.get(at(index + 2)) & 0xFF) << 16;
  }

  @Override
  protected int _getInt(int index) {
    return mem.getInt(at(index));
  }

  @Override
  protected int _getIntLE(int index) {
    return Integer.reverseBytes(mem.getInt(at(index)));
  }

  @Override
  protected long _getLong(int index) {
    return mem.getLong(at(index));
  }

  @Override
  protected long _getLongLE(int index) {
    return Long.reverseBytes(mem.getLong(at(index)));
  }

  @Override
  protected void _setByte(int index, int value) {
    mem.put(at(index), (byte) value);
  }

  @Override
  protected void _setShort(int index, int value) {
    mem.putShort(at(index), (short) value);
  }

  @Override
  protected void _setShortLE(int index, int value) {
    mem.putShort(at(index), Short.reverseBytes((short) value));
  }

  @Override
  protected void _setMedium(int index, int value) {
    mem.put(at(index), (byte) (value >>> 16));
    mem.put(at(index + 1), (byte) (value >>> 8));
    mem.put(at(index + 2), (byte) value);
  }

  @Override
  protected void _setMediumLE(int index, int value) {
    mem.put(at(index), (byte) value);
    mem.put(at(index + 1), (byte) (value >>> 8));
    mem.put(at(index + 2), (byte) (value >>> 16));
  }

  @Override
  protected void _setInt(int index, int value) {
    mem.putInt(at(index), value);
  }

  @Override
  protected void _setIntLE(int index, int value) {
    mem.putInt(at(index), Integer.reverseBytes(value));
  }

  @Override
  protected void _setLong(int index, long value) {
    mem.putLong(at(index), value);
  }

  @Override
  protected void _setLongLE(int index, long value) {
    mem.putLong(at(index), Long.reverseBytes(value));
  }

  // ---------------------------------------------------------------- bulk

  @Override
  public ByteBuf getBytes(int index, byte[] dst, int dstIndex, int length) {
    checkDstIndex(index, length, dstIndex, dst.length);
    mem.get(at(index), dst, dstIndex, length);
    return this;
  }

  @Override
  public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int length) {
    checkDstIndex(index, length, dstIndex, dst.capacity());
    parent.getBytes(parentBase + index, dst, dstIndex, length);
    return this;
  }

  @Override
  public ByteBuf getBytes(int index, ByteBuffer dst) {
    parent.getBytes(parentIndex(index, dst.remaining()), dst);
    return this;
  }

  @Override
  public ByteBuf getBytes(int index, OutputStream out, int length) throws IOException {
    parent.getBytes(parentIndex(index, length), out, length);
    return this;
  }

  @Override
  public int getBytes(int index, GatheringByteChannel out, int length) throws IOException {
    return parent.getBytes(parentIndex(index, length), out, length);
  }

  @Override
  public int getBytes(int index, FileChannel out, long position, int length) throws IOException {
    return parent.getBytes(parentIndex(index, length), out, position, length);
  }

  @Override
  public ByteBuf setBytes(int index, byte[] src, int srcIndex, int length) {
    checkSrcIndex(index, length, srcIndex, src.length);
    mem.put(at(index), src, srcIndex, length);
    return this;
  }

  @Override
  public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int length) {
    checkSrcIndex(index, length, srcIndex, src.capacity());
    parent.setBytes(parentBase + index, src, srcIndex, length);
    return this;
  }

  @Override
  public ByteBuf setBytes(int index, ByteBuffer src) {
    parent.setBytes(parentIndex(index, src.remaining()), src);
    return this;
  }

  @Override
  public int setBytes(int index, InputStream in, int length) throws IOException {
    return parent.setBytes(parentIndex(index, length), in, length);
  }

  @Override
  public int setBytes(int index, ScatteringByteChannel in, int length) throws IOException {
    return parent.setBytes(parentIndex(index, length), in, length);
  }

  @Override
  public int setBytes(int index, FileChannel in, long position, int length) throws IOException {
    return parent.setBytes(parentIndex(index, length), in, position, length);
  }

  // ---------------------------------------------------------------- derived: from the parent

  @Override
  public ByteBuf copy(int index, int length) {
    return parent.copy(parentIndex(index, length), length);
  }

  @Override
  public ByteBuf slice(int index, int length) {
    return parent.slice(parentIndex(index, length), length);
  }

  @Override
  public ByteBuf retainedSlice(int index, int length) {
    return parent.retainedSlice(parentIndex(index, length), length);
  }

  @Override
  public ByteBuf duplicate() {
    ensureAccessible();
    return parent.slice(parentBase, size).setIndex(readerIndex(), writerIndex());
  }

  @Override
  public ByteBuf retainedDuplicate() {
    ensureAccessible();
    return parent.retainedSlice(parentBase, size).setIndex(readerIndex(), writerIndex());
  }

  @Override
  public int nioBufferCount() {
    return parent.nioBufferCount();
  }

  @Override
  public ByteBuffer nioBuffer(int index, int length) {
    return parent.nioBuffer(parentIndex(index, length), length);
  }

  @Override
  public ByteBuffer internalNioBuffer(int index, int length) {
    return parent.internalNioBuffer(parentIndex(index, length), length);
  }

  @Override
  public ByteBuffer[] nioBuffers(int index, int length) {
    return parent.nioBuffers(parentIndex(index, length), length);
  }

  // ---------------------------------------------------------------- what it is

  @Override
  public int capacity() {
    return size;
  }

  @Override
  public ByteBuf capacity(int newCapacity) {
    throw new UnsupportedOperationException("a frame body has the size it arrived with");
  }

  @Override
  public ByteBufAllocator alloc() {
    return parent.alloc();
  }

  @Override
  @Deprecated
  public ByteOrder order() {
    return ByteOrder.BIG_ENDIAN;
  }

  @Override
  public ByteBuf unwrap() {
    return parent;
  }

  @Override
  public boolean isDirect() {
    return parent.isDirect();
  }

  @Override
  public boolean isReadOnly() {
    return parent.isReadOnly();
  }

  @Override
  public boolean isContiguous() {
    return true;
  }

  @Override
  public boolean hasArray() {
    return parent.hasArray();
  }

  @Override
  public byte[] array() {
    return parent.array();
  }

  @Override
  public int arrayOffset() {
    return parent.arrayOffset() + parentBase;
  }

  @Override
  public boolean hasMemoryAddress() {
    return parent.hasMemoryAddress();
  }

  @Override
  public long memoryAddress() {
    return parent.memoryAddress() + parentBase;
  }

  // ---------------------------------------------------------------- the parent's count

  @Override
  public int refCnt() {
    return parent.refCnt();
  }

  @Override
  public ByteBuf retain() {
    parent.retain();
    retained = true;
    return this;
  }

  @Override
  public ByteBuf retain(int increment) {
    parent.retain(increment);
    retained = true;
    return this;
  }

  @Override
  public ByteBuf touch() {
    parent.touch();
    return this;
  }

  @Override
  public ByteBuf touch(Object hint) {
    parent.touch(hint);
    return this;
  }

  @Override
  public boolean release() {
    return parent.release();
  }

  @Override
  public boolean release(int decrement) {
    return parent.release(decrement);
  }
}

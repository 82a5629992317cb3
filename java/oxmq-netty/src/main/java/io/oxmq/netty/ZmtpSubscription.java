package io.oxmq.netty;

import java.nio.charset.StandardCharsets;

/**
 * A subscription or its cancellation, in either direction.
 *
 * <p>Written to a codec on a SUB/XSUB socket, it goes out as a ZMTP 3.1 SUBSCRIBE/CANCEL command,
 * or to a 3.0/2.0 peer as a message whose first byte is 0x01/0x00 ahead of the topic. A codec on a
 * PUB/XPUB socket reads both forms and passes them on as {@code ZmtpSubscription}s; after a
 * handshake with a ZMTP/1.0 peer (which sends no subscriptions) it passes on a subscription to
 * everything, as libzmq does.
 */
public final class ZmtpSubscription {
  private final boolean subscribe;
  private final byte[] topic;

  /**
   * @param subscribe true to subscribe, false to cancel
   * @param topic the topic prefix (copied)
   */
  public ZmtpSubscription(boolean subscribe, byte[] topic) {
    this.subscribe = subscribe;
    this.topic = topic.clone();
  }

  /** @return a subscription to {@code topic} (UTF-8) */
  public static ZmtpSubscription subscribe(String topic) {
    return new ZmtpSubscription(true, topic.getBytes(StandardCharsets.UTF_8));
  }

  /** @return a cancellation of {@code topic} (UTF-8) */
  public static ZmtpSubscription cancel(String topic) {
    return new ZmtpSubscription(false, topic.getBytes(StandardCharsets.UTF_8));
  }

  /** @return true for a subscription, false for a cancellation */
  public boolean isSubscribe() {
    return subscribe;
  }

  /** @return the topic prefix (a copy) */
  public byte[] topic() {
    return topic.clone();
  }

  int topicLength() {
    return topic.length;
  }

  byte[] topicRef() {
    return topic;
  }

  /**
   * @param data the start of a message
   * @param length its length
   * @return whether a message of this topic filter passes {@code data}
   */
  public boolean matches(byte[] data, int length) {
    if (length < topic.length) {
      return false;
    }
    for (int i = 0; i < topic.length; i++) {
      if (data[i] != topic[i]) {
        return false;
      }
    }
    return true;
  }

  @Override
  public String toString() {
    return (subscribe ? "SUBSCRIBE " : "CANCEL ") + new String(topic, StandardCharsets.UTF_8);
  }
}

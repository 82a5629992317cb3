package io.oxmq.netty;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/** The PLAIN mechanism's side of one codec: a client's credentials or a server's authenticator. */
final class ZmtpPlain {
  private final byte[] username;
  private final byte[] password;
  private final ZmtpPlainAuthenticator authenticator;

  private ZmtpPlain(byte[] username, byte[] password, ZmtpPlainAuthenticator authenticator) {
    this.username = username;
    this.password = password;
    this.authenticator = authenticator;
  }

  static ZmtpPlain client(String username, String password) {
    byte[] u = username.getBytes(StandardCharsets.UTF_8);
    byte[] p = password.getBytes(StandardCharsets.UTF_8);
    if (u.length > 255 || p.length > 255) {
      throw new IllegalArgumentException("PLAIN user name and password are at most 255 bytes each");
    }
    return new ZmtpPlain(u, p, null);
  }

  static ZmtpPlain server(ZmtpPlainAuthenticator authenticator) {
    return new ZmtpPlain(null, null, Objects.requireNonNull(authenticator));
  }

  boolean isServer() {
    return authenticator != null;
  }

  /** @return the body of the client's HELLO after its name: user name and password, each with its length */
  byte[] hello() {
    byte[] b = new byte[2 + username.length + password.length];
    b[0] = (byte) username.length;
    System.arraycopy(username, 0, b, 1, username.length);
    b[1 + username.length] = (byte) password.length;
    System.arraycopy(password, 0, b, 2 + username.length, password.length);
    return b;
  }

  /**
   * Parses a HELLO body and asks the authenticator.
   *
   * @return the accepted user name
   * @throws ZmtpException {@code MalformedCommand} for a HELLO that is not two short strings,
   *     {@code AuthenticationFailed} when the authenticator refuses or throws
   */
  String authenticate(byte[] hello) {
    int ul = hello.length > 0 ? hello[0] & 0xFF : -1;
    if (ul < 0 || hello.length < 2 + ul || hello.length != 2 + ul + (hello[1 + ul] & 0xFF)) {
      throw new ZmtpException("MalformedCommand", "HELLO is not a user name and a password");
    }
    String user = new String(hello, 1, ul, StandardCharsets.UTF_8);
    String pass = new String(hello, 2 + ul, hello.length - 2 - ul, StandardCharsets.UTF_8);
    boolean ok;
    RuntimeException thrown = null;
    try {
      ok = authenticator.authenticate(user, pass);
    } catch (RuntimeException e) {
      ok = false;
      thrown = e;
    }
    if (!ok) {
      ZmtpException e = new ZmtpException("AuthenticationFailed",
          "PLAIN credentials of user '" + user + "' refused");
      if (thrown != null) {
        e.initCause(thrown);
      }
      throw e;
    }
    return user;
  }
}

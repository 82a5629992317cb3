/*
 * zws-peer: the server side of the js/ client tests, a small program over the libzmq C API so
 * that any libzmq.so.5 with ws:// can play it (libzmq 4.3.5 with drafts; oxmq's C ABI once it
 * binds ws://). It binds one socket and speaks a line protocol on stdout that the tests read:
 *
 *   BOUND <endpoint>          once, after the bind (the real port when the endpoint had :*)
 *   RECV <hex> <hex> ...      each message it receives, one hex word per frame ("-" for empty)
 *   SENT <n>                  (push, req) after its n-th message
 *
 * It exits when stdin closes (the test ended) or on SIGTERM.
 *
 * usage: zws-peer TYPE ENDPOINT [--plain USER:PASS] [--curve SECRET_Z85] [--curve-client PUBLIC_Z85]
 *                 [--subscribe TOPIC]... [--routing-id ID] [--count N] [--wss CERT_PEM_FILE KEY_PEM_FILE]
 *   rep router dealer pair   echo every message back (router keeps the routing id frame)
 *   pull sub                 print every message (sub subscribes to each --subscribe, default all)
 *   push                     send --count messages "0".."N-1"
 *   req                      send --count requests "req <i>", printing each reply
 *   pub                      publish "A <i>", "B <i>" and "sync <i>" every 2 ms until stdin closes
 * --plain and --curve make it a PLAIN or CURVE server, with a ZAP handler that accepts only that
 * user and password (PLAIN) or, with --curve-client, only that client key (CURVE).
 * --wss gives a wss:// endpoint its certificate and key (ZMQ_WSS_CERT_PEM, ZMQ_WSS_KEY_PEM).
 * --connect connects to ENDPOINT instead of binding it (and prints "BOUND ENDPOINT" all the same);
 * --plain-client USER:PASS makes it a PLAIN client; --curve-to SERVER_PUB CLIENT_PUB CLIENT_SECRET
 * (Z85) a CURVE client.
 */
#include <zmq.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char plain_user[256], plain_pass[256], curve_client[41];

static void print_msg(const char *tag, zmq_msg_t *parts, int n) {
  printf("%s", tag);
  for (int i = 0; i < n; i++) {
    const unsigned char *d = zmq_msg_data(&parts[i]);
    size_t len = zmq_msg_size(&parts[i]);
    printf(" ");
    if (len == 0) printf("-");
    for (size_t j = 0; j < len; j++) printf("%02x", d[j]);
  }
  printf("\n");
  fflush(stdout);
}

/* Receives one multipart message into parts (at most 32 frames); returns the count or -1. */
static int recv_msg(void *s, zmq_msg_t *parts) {
  int n = 0;
  for (;;) {
    zmq_msg_init(&parts[n]);
    if (zmq_msg_recv(&parts[n], s, 0) < 0) return -1;
    int more = zmq_msg_more(&parts[n]);
    if (++n == 32 || !more) return n;
  }
}

static int send_msg(void *s, zmq_msg_t *parts, int n) {
  for (int i = 0; i < n; i++)
    if (zmq_msg_send(&parts[i], s, i < n - 1 ? ZMQ_SNDMORE : 0) < 0) return -1;
  return 0;
}

static void send_str(void *s, const char *text) {
  if (zmq_send(s, text, strlen(text), 0) < 0) { perror("send"); exit(1); }
}

static int frame_is(zmq_msg_t *m, const char *text) {
  return zmq_msg_size(m) == strlen(text) && memcmp(zmq_msg_data(m), text, strlen(text)) == 0;
}

/* ZAP (RFC 27): accept only the configured PLAIN user/password or CURVE client key. */
static void *zap_handler(void *ctx) {
  void *zap = zmq_socket(ctx, ZMQ_REP);
  if (zmq_bind(zap, "inproc://zeromq.zap.01") != 0) { perror("zap bind"); exit(1); }
  zmq_msg_t p[32];
  for (;;) {
    int n = recv_msg(zap, p);
    if (n < 0) break;
    int ok = 0;
    if (n >= 7 && frame_is(&p[5], "PLAIN") && n >= 8) {
      char user[256] = {0}, pass[256] = {0};
      memcpy(user, zmq_msg_data(&p[6]), zmq_msg_size(&p[6]) < 255 ? zmq_msg_size(&p[6]) : 255);
      memcpy(pass, zmq_msg_data(&p[7]), zmq_msg_size(&p[7]) < 255 ? zmq_msg_size(&p[7]) : 255);
      ok = strcmp(user, plain_user) == 0 && strcmp(pass, plain_pass) == 0;
    } else if (n >= 7 && frame_is(&p[5], "CURVE")) {
      char key[41];
      zmq_z85_encode(key, zmq_msg_data(&p[6]), 32);
      ok = curve_client[0] == 0 || strcmp(key, curve_client) == 0;
    } else if (n >= 6 && frame_is(&p[5], "NULL")) {
      ok = 1;
    }
    zmq_send(zap, "1.0", 3, ZMQ_SNDMORE);
    zmq_send(zap, zmq_msg_data(&p[1]), zmq_msg_size(&p[1]), ZMQ_SNDMORE);
    zmq_send(zap, ok ? "200" : "400", 3, ZMQ_SNDMORE);
    zmq_send(zap, ok ? "OK" : "denied", ok ? 2 : 6, ZMQ_SNDMORE);
    zmq_send(zap, ok ? "user" : "", ok ? 4 : 0, ZMQ_SNDMORE);
    zmq_send(zap, "", 0, 0);
    for (int i = 0; i < n; i++) zmq_msg_close(&p[i]);
  }
  zmq_close(zap);
  return NULL;
}

/* The whole of a small file, NUL-terminated, or exit. */
static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); exit(2); }
  static char bufs[2][16384];
  static int next;
  char *buf = bufs[next++ & 1];
  size_t n = fread(buf, 1, sizeof bufs[0] - 1, f);
  buf[n] = 0;
  fclose(f);
  return buf;
}

static void *stdin_watch(void *arg) {
  (void)arg;
  char buf[256];
  while (read(0, buf, sizeof buf) > 0) {}
  _exit(0);
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: zws-peer TYPE ENDPOINT [options]\n"); return 2; }
  const char *type = argv[1], *endpoint = argv[2];
  const char *plain = NULL, *plain_client = NULL, *curve = NULL, *curve_to[3] = {NULL, NULL, NULL}, *routing_id = NULL, *wss_cert = NULL, *wss_key = NULL;
  const char *subs[16]; int nsubs = 0; long count = 10; int connect = 0;
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--plain") && i + 1 < argc) plain = argv[++i];
    else if (!strcmp(argv[i], "--curve") && i + 1 < argc) curve = argv[++i];
    else if (!strcmp(argv[i], "--curve-client") && i + 1 < argc) snprintf(curve_client, sizeof curve_client, "%s", argv[++i]);
    else if (!strcmp(argv[i], "--subscribe") && i + 1 < argc && nsubs < 16) subs[nsubs++] = argv[++i];
    else if (!strcmp(argv[i], "--routing-id") && i + 1 < argc) routing_id = argv[++i];
    else if (!strcmp(argv[i], "--count") && i + 1 < argc) count = atol(argv[++i]);
    else if (!strcmp(argv[i], "--connect")) connect = 1;
    else if (!strcmp(argv[i], "--plain-client") && i + 1 < argc) plain_client = argv[++i];
    else if (!strcmp(argv[i], "--curve-to") && i + 3 < argc) { curve_to[0] = argv[++i]; curve_to[1] = argv[++i]; curve_to[2] = argv[++i]; }
    else if (!strcmp(argv[i], "--wss") && i + 2 < argc) { wss_cert = slurp(argv[++i]); wss_key = slurp(argv[++i]); }
    else { fprintf(stderr, "zws-peer: bad argument %s\n", argv[i]); return 2; }
  }
  static const struct { const char *name; int type; } types[] = {
    {"rep", ZMQ_REP}, {"router", ZMQ_ROUTER}, {"dealer", ZMQ_DEALER}, {"pair", ZMQ_PAIR}, {"pull", ZMQ_PULL},
    {"sub", ZMQ_SUB}, {"push", ZMQ_PUSH}, {"req", ZMQ_REQ}, {"pub", ZMQ_PUB}};
  int stype = -1;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) if (!strcmp(type, types[i].name)) stype = types[i].type;
  if (stype < 0) { fprintf(stderr, "zws-peer: unknown type %s\n", type); return 2; }

  void *ctx = zmq_ctx_new();
  pthread_t thread;
  pthread_create(&thread, NULL, stdin_watch, NULL);
  if (plain || curve) pthread_create(&thread, NULL, zap_handler, ctx);
  void *s = zmq_socket(ctx, stype);
  int one = 1;
  if (plain) {
    const char *colon = strchr(plain, ':');
    if (!colon) { fprintf(stderr, "zws-peer: --plain USER:PASS\n"); return 2; }
    snprintf(plain_user, sizeof plain_user, "%.*s", (int)(colon - plain), plain);
    snprintf(plain_pass, sizeof plain_pass, "%s", colon + 1);
    zmq_setsockopt(s, ZMQ_PLAIN_SERVER, &one, sizeof one);
  }
  if (plain_client) {
    const char *colon = strchr(plain_client, ':');
    if (!colon) { fprintf(stderr, "zws-peer: --plain-client USER:PASS\n"); return 2; }
    zmq_setsockopt(s, ZMQ_PLAIN_USERNAME, plain_client, colon - plain_client);
    zmq_setsockopt(s, ZMQ_PLAIN_PASSWORD, colon + 1, strlen(colon + 1));
  }
  if (curve_to[0]) {
    if (zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, curve_to[0], 40) || zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, curve_to[1], 40) ||
        zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, curve_to[2], 40)) { perror("curve client keys"); return 2; }
  }
  if (curve) {
    zmq_setsockopt(s, ZMQ_CURVE_SERVER, &one, sizeof one);
    if (zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, curve, 40) != 0) { perror("curve key"); return 2; }
  }
  if (plain || curve) zmq_setsockopt(s, ZMQ_ZAP_DOMAIN, "test", 4);
  if (wss_cert) {
    if (zmq_setsockopt(s, 104 /* ZMQ_WSS_CERT_PEM */, wss_cert, strlen(wss_cert)) != 0 ||
        zmq_setsockopt(s, 103 /* ZMQ_WSS_KEY_PEM */, wss_key, strlen(wss_key)) != 0) { perror("wss options"); return 2; }
  }
  if (routing_id) zmq_setsockopt(s, ZMQ_ROUTING_ID, routing_id, strlen(routing_id));
  if (stype == ZMQ_SUB) {
    if (nsubs == 0) zmq_setsockopt(s, ZMQ_SUBSCRIBE, "", 0);
    for (int i = 0; i < nsubs; i++) zmq_setsockopt(s, ZMQ_SUBSCRIBE, subs[i], strlen(subs[i]));
  }
  char bound[256]; size_t blen = sizeof bound;
  if (connect) {
    if (zmq_connect(s, endpoint) != 0) { fprintf(stderr, "zws-peer: connect %s: %s\n", endpoint, zmq_strerror(errno)); return 1; }
    snprintf(bound, sizeof bound, "%s", endpoint);
  } else {
    if (zmq_bind(s, endpoint) != 0) { fprintf(stderr, "zws-peer: bind %s: %s\n", endpoint, zmq_strerror(errno)); return 1; }
    zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, bound, &blen);
  }
  printf("BOUND %s\n", bound);
  fflush(stdout);

  zmq_msg_t parts[32];
  char text[64];
  switch (stype) {
    case ZMQ_REP: case ZMQ_ROUTER: case ZMQ_DEALER: case ZMQ_PAIR:
      for (;;) {
        int n = recv_msg(s, parts);
        if (n < 0) break;
        print_msg("RECV", parts, n);
        if (send_msg(s, parts, n) != 0) perror("echo");
      }
      break;
    case ZMQ_PULL: case ZMQ_SUB:
      for (;;) {
        int n = recv_msg(s, parts);
        if (n < 0) break;
        print_msg("RECV", parts, n);
        for (int i = 0; i < n; i++) zmq_msg_close(&parts[i]);
      }
      break;
    case ZMQ_PUSH:
      for (long i = 0; i < count; i++) {
        snprintf(text, sizeof text, "%ld", i);
        send_str(s, text);
        printf("SENT %ld\n", i + 1);
        fflush(stdout);
      }
      pause();
      break;
    case ZMQ_REQ:
      for (long i = 0; i < count; i++) {
        snprintf(text, sizeof text, "req %ld", i);
        send_str(s, text);
        int n = recv_msg(s, parts);
        if (n < 0) break;
        print_msg("RECV", parts, n);
        printf("SENT %ld\n", i + 1);
        fflush(stdout);
      }
      pause();
      break;
    case ZMQ_PUB:
      for (long i = 0;; i++) {
        snprintf(text, sizeof text, "A %ld", i); send_str(s, text);
        snprintf(text, sizeof text, "B %ld", i); send_str(s, text);
        snprintf(text, sizeof text, "sync %ld", i); send_str(s, text);
        usleep(2000);
      }
  }
  return 0;
}

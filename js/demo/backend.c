/*
 * The demo's ZeroMQ side, on the libzmq C API (libzmq 4.3.5 with drafts, or any libzmq.so.5 with
 * ws://): a PUB at ws://127.0.0.1:PORT/ticks publishing "tick <seq> <value>" ten times a second
 * (a slow sine with a little noise, like a sensor), and a REP at ws://127.0.0.1:PORT/ask that
 * answers each question with "<question reversed> (answer #n)". Prints "TICKS <endpoint>" and
 * "ASK <endpoint>" once bound; exits when stdin closes.
 */
#include <zmq.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *stdin_watch(void *arg) {
  (void)arg;
  char buf[256];
  while (read(0, buf, sizeof buf) > 0) {}
  _exit(0);
}

static void *answer(void *rep) {
  char question[512], reply[600];
  for (long n = 1;; n++) {
    int len = zmq_recv(rep, question, sizeof question - 1, 0);
    if (len < 0) return NULL;
    if (len > (int)sizeof question - 1) len = sizeof question - 1;
    for (int i = 0; i < len / 2; i++) { char t = question[i]; question[i] = question[len - 1 - i]; question[len - 1 - i] = t; }
    question[len] = 0;
    int rlen = snprintf(reply, sizeof reply, "%s (answer #%ld)", question, n);
    zmq_send(rep, reply, rlen, 0);
  }
}

static void *bind_print(void *ctx, int type, const char *endpoint, const char *tag) {
  void *s = zmq_socket(ctx, type);
  if (zmq_bind(s, endpoint) != 0) { fprintf(stderr, "bind %s: %s\n", endpoint, zmq_strerror(zmq_errno())); exit(1); }
  char bound[256]; size_t len = sizeof bound;
  zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, bound, &len);
  printf("%s %s\n", tag, bound);
  fflush(stdout);
  return s;
}

int main(void) {
  void *ctx = zmq_ctx_new();
  pthread_t t;
  pthread_create(&t, NULL, stdin_watch, NULL);
  void *pub = bind_print(ctx, ZMQ_PUB, "ws://127.0.0.1:*/ticks", "TICKS");
  void *rep = bind_print(ctx, ZMQ_REP, "ws://127.0.0.1:*/ask", "ASK");
  pthread_create(&t, NULL, answer, rep);
  char text[64];
  for (long seq = 0;; seq++) {
    double value = 50 + 35 * sin(seq / 10.0) + (rand() % 1000) / 100.0;
    int len = snprintf(text, sizeof text, "tick %ld %.2f", seq, value);
    zmq_send(pub, text, len, 0);
    usleep(100000);
  }
}

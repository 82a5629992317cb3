/* CURVE through the C ABI: zmq_has, the key functions (checked against a fixed vector and
 * against Debian's libzmq loaded side by side with dlopen), the key options' binary and Z85
 * read-back, and a CURVE connection over tcp. */
#define _GNU_SOURCE
#include "testutil.h"

#include <dlfcn.h>
#include <limits.h>

/* libzmq's own test vector (tests/test_security_curve.cpp); pyzmq 27 / libzmq 4.3.5 agree:
 * zmq.curve_public(SECRET) == PUBLIC. */
static const char SECRET[] = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
static const char PUBLIC[] = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";

#define SYSTEM_LIBZMQ "/usr/lib/x86_64-linux-gnu/libzmq.so.5"

/* Whether this program runs on Debian's libzmq (run.sh --libzmq, the reference pass). */
static int on_system_libzmq (void)
{
    Dl_info info;
    char real[PATH_MAX], sys[PATH_MAX];
    return dladdr ((void *) zmq_curve_public, &info) != 0 && realpath (info.dli_fname, real)
           && realpath (SYSTEM_LIBZMQ, sys) && strcmp (real, sys) == 0;
}

static void test_has_curve (void)
{
    CHECK (zmq_has ("curve") == 1);
}

static void test_keys (void)
{
    char pub[41], sec[41], derived[41];
    CHECK (zmq_curve_public (derived, SECRET) == 0);
    CHECK (strcmp (derived, PUBLIC) == 0);
    CHECK (zmq_curve_keypair (pub, sec) == 0);
    CHECK (strlen (pub) == 40 && strlen (sec) == 40);
    CHECK (zmq_curve_public (derived, sec) == 0 && strcmp (derived, pub) == 0);
    char pub2[41], sec2[41];
    CHECK (zmq_curve_keypair (pub2, sec2) == 0);
    CHECK (strcmp (sec, sec2) != 0 && strcmp (pub, pub2) != 0);
    uint8_t bin[32];
    CHECK (zmq_z85_decode (bin, pub) == bin);
    /* Bad secrets: wrong length, characters outside Z85, null pointers. libzmq does not
     * check these (it reads past a short key and crashes on NULL); oxmq says EINVAL/EFAULT. */
    if (on_system_libzmq ())
        return;
    CHECK_ERR (zmq_curve_public (derived, "short"), EINVAL);
    CHECK_ERR (zmq_curve_public (derived, "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6x"), EINVAL);
    CHECK_ERR (zmq_curve_public (derived, "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh~"), EINVAL);
    CHECK_ERR (zmq_curve_public (derived, NULL), EFAULT);
    CHECK_ERR (zmq_curve_public (NULL, SECRET), EFAULT);
    CHECK_ERR (zmq_curve_keypair (NULL, sec), EFAULT);
}

/* The library this program is running against, and Debian's libzmq opened beside it. */
static void test_matches_system_libzmq (void)
{
    void *h = dlopen (SYSTEM_LIBZMQ, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!h) {
        fprintf (stderr, "  dlopen %s: %s\n", SYSTEM_LIBZMQ, dlerror ());
        t_failures++;
        return;
    }
    typedef int (*public_fn) (char *, const char *);
    typedef int (*keypair_fn) (char *, char *);
    public_fn sys_public = (public_fn) dlsym (h, "zmq_curve_public");
    keypair_fn sys_keypair = (keypair_fn) dlsym (h, "zmq_curve_keypair");
    CHECK (sys_public != NULL && sys_keypair != NULL);
    if (!sys_public || !sys_keypair)
        return;
    /* Unless this run is the reference pass against libzmq itself, the two must be distinct
     * libraries, or the comparison below would compare a library with itself. */
    if (!on_system_libzmq ())
        CHECK ((void *) sys_public != (void *) zmq_curve_public);
    for (int i = 0; i < 20; i++) {
        char pub[41], sec[41], other[41];
        /* Ours generates, libzmq derives; then the other way round. */
        CHECK (zmq_curve_keypair (pub, sec) == 0);
        CHECK (sys_public (other, sec) == 0 && strcmp (other, pub) == 0);
        CHECK (sys_keypair (pub, sec) == 0);
        CHECK (zmq_curve_public (other, sec) == 0 && strcmp (other, pub) == 0);
    }
    dlclose (h);
}

static void test_key_options (void)
{
    void *ctx = zmq_ctx_new ();
    void *s = new_socket (ctx, ZMQ_DEALER);
    int mech = -1;
    size_t len = sizeof mech;
    CHECK_RC (zmq_getsockopt (s, ZMQ_MECHANISM, &mech, &len));
    CHECK (mech == ZMQ_NULL);
    CHECK_RC (zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, SECRET, 40));
    CHECK_RC (zmq_setsockopt (s, ZMQ_CURVE_PUBLICKEY, PUBLIC, 41)); /* with its NUL */
    set_int (s, ZMQ_CURVE_SERVER, 1);
    len = sizeof mech;
    CHECK_RC (zmq_getsockopt (s, ZMQ_MECHANISM, &mech, &len));
    CHECK (mech == ZMQ_CURVE);
    char z85[41];
    len = sizeof z85;
    CHECK_RC (zmq_getsockopt (s, ZMQ_CURVE_PUBLICKEY, z85, &len));
    CHECK (len == 41 && strcmp (z85, PUBLIC) == 0);
    len = sizeof z85;
    CHECK_RC (zmq_getsockopt (s, ZMQ_CURVE_SECRETKEY, z85, &len));
    CHECK (len == 41 && strcmp (z85, SECRET) == 0);
    uint8_t bin[32], want[32];
    len = sizeof bin;
    CHECK_RC (zmq_getsockopt (s, ZMQ_CURVE_PUBLICKEY, bin, &len));
    CHECK (len == 32 && zmq_z85_decode (want, PUBLIC) && memcmp (bin, want, 32) == 0);
    char odd[40];
    len = sizeof odd;
    CHECK_ERR (zmq_getsockopt (s, ZMQ_CURVE_PUBLICKEY, odd, &len), EINVAL);
    CHECK_ERR (zmq_setsockopt (s, ZMQ_CURVE_SERVERKEY, "not a key", 9), EINVAL);
    /* PLAIN strings come back with their NUL, as libzmq returns them. */
    CHECK_RC (zmq_setsockopt (s, ZMQ_PLAIN_USERNAME, "admin", 5));
    char name[64];
    len = sizeof name;
    CHECK_RC (zmq_getsockopt (s, ZMQ_PLAIN_USERNAME, name, &len));
    CHECK (len == 6 && strcmp (name, "admin") == 0);
    len = sizeof mech;
    CHECK_RC (zmq_getsockopt (s, ZMQ_MECHANISM, &mech, &len));
    CHECK (mech == ZMQ_PLAIN);
    len = 3;
    CHECK_ERR (zmq_getsockopt (s, ZMQ_PLAIN_USERNAME, name, &len), EINVAL);
    CHECK_RC (zmq_close (s));
    CHECK_RC (zmq_ctx_term (ctx));
}

/* A CURVE client and server with keys from zmq_curve_keypair talk over tcp; a client with
 * the wrong server key gets nothing through. */
static void test_curve_connection (void)
{
    void *ctx = zmq_ctx_new ();
    char spub[41], ssec[41], cpub[41], csec[41], wrong[41], wsec[41];
    CHECK (zmq_curve_keypair (spub, ssec) == 0);
    CHECK (zmq_curve_keypair (cpub, csec) == 0);
    CHECK (zmq_curve_keypair (wrong, wsec) == 0);
    void *server = new_socket (ctx, ZMQ_ROUTER);
    set_int (server, ZMQ_CURVE_SERVER, 1);
    CHECK_RC (zmq_setsockopt (server, ZMQ_CURVE_SECRETKEY, ssec, 40));
    CHECK_RC (zmq_bind (server, "tcp://127.0.0.1:*"));
    char ep[256];
    size_t len = sizeof ep;
    CHECK_RC (zmq_getsockopt (server, ZMQ_LAST_ENDPOINT, ep, &len));

    void *bad = new_socket (ctx, ZMQ_DEALER);
    CHECK_RC (zmq_setsockopt (bad, ZMQ_CURVE_SERVERKEY, wrong, 40));
    CHECK_RC (zmq_setsockopt (bad, ZMQ_CURVE_PUBLICKEY, cpub, 40));
    CHECK_RC (zmq_setsockopt (bad, ZMQ_CURVE_SECRETKEY, csec, 40));
    CHECK_RC (zmq_connect (bad, ep));
    send_str (bad, "from bad", 0);

    void *client = new_socket (ctx, ZMQ_DEALER);
    CHECK_RC (zmq_setsockopt (client, ZMQ_CURVE_SERVERKEY, spub, 40));
    CHECK_RC (zmq_setsockopt (client, ZMQ_CURVE_PUBLICKEY, cpub, 40));
    CHECK_RC (zmq_setsockopt (client, ZMQ_CURVE_SECRETKEY, csec, 40));
    CHECK_RC (zmq_connect (client, ep));
    send_str (client, "hello", 0);
    /* The first message the server sees is the good client's: the bad one never handshakes. */
    char id[256];
    int idn = zmq_recv (server, id, sizeof id, 0);
    CHECK (idn > 0);
    expect_str (server, "hello");
    CHECK (zmq_send (server, id, (size_t) idn, ZMQ_SNDMORE) == idn);
    send_str (server, "world", 0);
    expect_str (client, "world");
    CHECK_RC (zmq_close (bad));
    CHECK_RC (zmq_close (client));
    CHECK_RC (zmq_close (server));
    CHECK_RC (zmq_ctx_term (ctx));
}

int main (int argc, char **argv)
{
    t_only = argc > 1 ? argv[1] : NULL;
    RUN (test_has_curve);
    RUN (test_keys);
    RUN (test_matches_system_libzmq);
    RUN (test_key_options);
    RUN (test_curve_connection);
    return test_main_end ();
}

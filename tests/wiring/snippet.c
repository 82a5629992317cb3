/*  The C snippet, verbatim between the markers, with only the include line changed
    (zmq_wiring.h for the seed's czmq.h). Run as `snippet HOST`; checks what came back. */
#include <zmq_wiring.h>
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main (int argc, char *argv[])
{
    const char *host = argc > 1 ? argv[1] : "";
    /* ---- the snippet ---- */
void *handle = czmq_create (host);                 /* host: where the name server runs */
int eid = czmq_create_exchange (handle, "E", CZMQ_SCOPE_GLOBAL, "");
czmq_create_queue (handle, "Q", CZMQ_SCOPE_GLOBAL, "");
czmq_bind (handle, "E", "Q");
void *buf = malloc (10); memset (buf, 0, 10);
czmq_send (handle, eid, buf, 10, free);           /* the library frees buf with free() */
void *data; size_t size; czmq_free_fn *ffn;
czmq_receive (handle, &data, &size, &ffn);
    /* checks between the snippet's lines */
    if (!handle || eid < 0 || size != 10) {
        fprintf (stderr, "snippet: handle %p eid %d size %zu errno %d\n", handle, eid, size, errno);
        return 1;
    }
    for (size_t i = 0; i < size; i++)
        assert (((unsigned char *) data)[i] == 0);
if (ffn) ffn (data);
czmq_destroy (handle);
    /* ---- end ---- */
    printf ("snippet: ok\n");
    return 0;
}

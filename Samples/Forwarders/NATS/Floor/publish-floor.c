// The benchmark's floor: the same JSON lines published to JetStream by the C client
// alone, as fast as it goes, with the same Nats-Msg-Id headers and asynchronous
// acknowledgements. Built by bench.sh with the C compiler (never by SwiftPM, which
// would link it against the Swift runtime):
//     cc -O2 -o publish-floor Floor/publish-floor.c $(pkg-config --cflags --libs libnats)
// Usage: publish-floor URL SUBJECT FILE   (FILE: JSON lines, each with "id":"...")
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, natsStatus s) {
    fprintf(stderr, "publish-floor: error: %s: %s\n", what, natsStatus_GetText(s));
    exit(75);
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: publish-floor URL SUBJECT FILE\n"); return 64; }
    FILE *file = fopen(argv[3], "rb");
    if (file == NULL) { perror(argv[3]); return 66; }
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *data = malloc(size + 1);
    if (data == NULL || fread(data, 1, size, file) != (size_t)size) { perror(argv[3]); return 74; }
    data[size] = 0;
    fclose(file);

    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsOptions jo;
    natsStatus s = natsConnection_ConnectTo(&nc, argv[1]);
    if (s != NATS_OK) fail("connect", s);
    jsOptions_Init(&jo);
    jo.PublishAsync.MaxPending = 8192;
    // Past 8192 answers pending, a publish waits for some, as long as the forwarder does and
    // longer than libnats's 200 ms: on a busy machine the server falls that far behind.
    jo.PublishAsync.StallWait = 30000;
    if ((s = natsConnection_JetStream(&js, nc, &jo)) != NATS_OK) fail("jetstream", s);

    long published = 0;
    char id[129];
    for (char *line = data, *end; line < data + size; line = end + 1) {
        end = memchr(line, '\n', data + size - line);
        if (end == NULL) end = data + size;
        char *start = strstr(line, "\"id\":\"");
        if (start == NULL || start > end) { fprintf(stderr, "publish-floor: a line without an id\n"); return 65; }
        start += 6;
        char *stop = memchr(start, '"', end - start);
        if (stop == NULL || stop - start > 128) { fprintf(stderr, "publish-floor: a bad id\n"); return 65; }
        memcpy(id, start, stop - start);
        id[stop - start] = 0;
        jsPubOptions po;
        jsPubOptions_Init(&po);
        po.MsgId = id;
        if ((s = js_PublishAsync(js, argv[2], line, (int)(end - line), &po)) != NATS_OK) fail("publish", s);
        published++;
    }
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = 30000;
    if ((s = js_PublishAsyncComplete(js, &po)) != NATS_OK) fail("acknowledgements", s);
    printf("%ld\n", published);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return 0;
}

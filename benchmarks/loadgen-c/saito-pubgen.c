/*
 * saito-pubgen: a QoS 1/2 publish load generator on libmosquitto, for measuring a broker (Mosquitto, Saito) with a
 * client that costs little per message.
 *
 * N connections in one process and one thread, driven by libmosquitto's external-loop API (mosquitto_socket,
 * epoll, mosquitto_loop_read/write/misc, non-blocking sockets). Each connection publishes Saito biosensor readings,
 * one per message, exactly as the .NET load tool's `ingest` does (IngestPublisher.cs):
 *   topic   saito/{prefix}-hub{i:000}/{prefix}-h{i:000}-d00/biosensor
 *   payload {"ts":..,"ch":..,"hr":..,"sys":..,"dia":..,"temp":..}
 * with at most --inflight publishes unacknowledged per connection (acknowledgements counted in the on_publish
 * callback). Each device's timestamps start 12 hours back and go up by one millisecond per reading, so no reading
 * repeats. The warm-up publishes to devices of its own ({prefix}w-...), is drained, and is not counted in the rate.
 *
 * --raw leaves libmosquitto out: the program writes CONNECT, PUBLISH (QoS 1), PINGREQ and DISCONNECT and parses
 * CONNACK, PUBACK and PINGRESP itself (MQTT 3.1.1), sends every publish a read makes room for in one send(), and
 * takes whatever the broker sent in one recv() per wake-up. libmosquitto writes each packet with a write() of its
 * own and reads a packet a byte at a time (three or more read()s a PUBACK), which on a two-core machine is about a
 * quarter of the machine at 200,000 messages/s. The counting, payloads and output are the same either way; the
 * JSON says which ("transport").
 *
 * The measured phase runs from its first publish until its last acknowledgement (publishing stops after
 * --duration, then what is in flight is drained), as the .NET tool measures. One JSON line goes to stdout at the
 * end; progress and errors go to stderr. Exit code: 0 clean, 1 errors (refused connections, disconnects,
 * unacknowledged or refused publishes: all counted in the JSON), 2 bad options.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <mosquitto.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define TWELVE_HOURS_MS (12LL * 3600 * 1000)
#define SENT_RING 4096 /* send times kept per connection, by packet id */
#define BUCKET_US 10 /* latency histogram: 10 µs buckets up to 10 s, and the exact maximum */
#define BUCKETS 1000000

struct options {
    const char *host;
    int port;
    int connections;
    int inflight;
    double warmup;
    double duration;
    int qos;
    int version; /* MQTT_PROTOCOL_V311 or MQTT_PROTOCOL_V5 */
    const char *prefix;
    const char *username;
    const char *password;
    double connect_timeout;
    double drain_timeout;
    int keepalive;
    double progress;
    bool batch;
    bool raw; /* --raw: MQTT 3.1.1 QoS 1 written and parsed here, not through libmosquitto */
};

enum phase { PHASE_CONNECTING, PHASE_WARMUP, PHASE_MEASURED, PHASE_DONE };

struct conn {
    struct mosquitto *mosq;
    int index;
    int fd;
    bool registered;
    bool want_write; /* EPOLLOUT currently requested */
    bool connected;
    bool dead;
    int outstanding; /* publishes sent and not yet acknowledged */
    double sent_at[SENT_RING]; /* by packet id modulo SENT_RING */
    int sent_mid[SENT_RING];
    long long sequence; /* readings published on this connection (the payload's values follow it) */
    long long last_ts[2]; /* per phase: warm-up device, measured device */
    char topic[2][160];
    /* per phase counts: [0] warm-up, [1] measured */
    long long sent[2];
    long long acked[2];
    long long refused[2];
    /* --raw only: bytes not yet written, bytes read and not yet parsed, the next packet id, when we last wrote */
    unsigned char *out;
    size_t out_len, out_off, out_cap;
    unsigned char *in;
    size_t in_len;
    int next_mid;
    double last_write;
};

#define RAW_IN 65536

static struct options o;
static struct conn *conns;
static int epfd;
static enum phase phase = PHASE_CONNECTING;
static bool sending; /* publishing new messages in the current phase */
static long long connect_failures, disconnects, publish_errors, loop_errors;
static int connected_count;
static uint32_t latency_buckets[BUCKETS]; /* publish-to-acknowledge, the current phase */
static long long latency_count, latency_lost;
static double latency_max;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long long wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static double cpu_s(double *user, double *sys)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    *user = (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6;
    *sys = (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec / 1e6;
    return *user + *sys;
}

static void note(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fputs("saito-pubgen: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

static int phase_slot(void) { return phase == PHASE_MEASURED ? 1 : 0; }

static void on_connect(struct mosquitto *mosq, void *obj, int rc, int flags, const mosquitto_property *props)
{
    (void)mosq;
    (void)flags;
    (void)props;
    struct conn *c = obj;
    if (rc == 0) {
        c->connected = true;
        connected_count++;
    } else {
        connect_failures++;
        c->dead = true;
        note("connection %d refused by the broker: %s (reason %d)", c->index,
            o.version == MQTT_PROTOCOL_V5 ? mosquitto_reason_string(rc) : mosquitto_connack_string(rc), rc);
    }
}

static void on_disconnect(struct mosquitto *mosq, void *obj, int rc, const mosquitto_property *props)
{
    (void)mosq;
    (void)props;
    struct conn *c = obj;
    if (c->dead) {
        return;
    }

    if (c->connected && rc != 0) {
        disconnects++;
        note("connection %d lost: %s (%d), %d publishes unacknowledged", c->index, mosquitto_strerror(rc), rc, c->outstanding);
    }

    if (c->connected) {
        connected_count--;
    }

    c->connected = false;
    c->dead = true;
}

/* PUBACK (QoS 1) or PUBCOMP (QoS 2). MQTT 5: a reason code of 0x80 or more is a refusal, counted apart. */
static void on_publish(struct mosquitto *mosq, void *obj, int mid, int reason, const mosquitto_property *props)
{
    (void)mosq;
    (void)props;
    struct conn *c = obj;
    int slot = phase_slot();
    c->outstanding--;
    int at = mid % SENT_RING;
    if (c->sent_mid[at] == mid) {
        double latency = now_s() - c->sent_at[at];
        long long bucket = (long long)(latency * 1e6 / BUCKET_US);
        latency_buckets[bucket < BUCKETS ? bucket : BUCKETS - 1]++;
        latency_count++;
        latency_max = latency > latency_max ? latency : latency_max;
        c->sent_mid[at] = 0;
    } else {
        latency_lost++; /* more than SENT_RING later publishes were acknowledged first */
    }

    if (reason >= 0x80) {
        c->refused[slot]++;
    } else {
        c->acked[slot]++;
    }
}

/* {"ts":..,"ch":..,"hr":..,"sys":..,"dia":..,"temp":..}: the same numbers as IngestPublisher.WritePayload. */
static int write_payload(struct conn *c, int slot, char *out, size_t size)
{
    long long ts = c->last_ts[slot] + 1;
    c->last_ts[slot] = ts;
    long long seq = c->sequence++;
    long long tenths = 318 + (seq * 17 % 30);
    return snprintf(out, size, "{\"ts\":%lld,\"ch\":%lld,\"hr\":%lld,\"sys\":%lld,\"dia\":%lld,\"temp\":%lld.%lld}", ts, seq % 4,
        58 + (seq * 7 % 45), 104 + (seq * 11 % 32), 64 + (seq * 13 % 22), tenths / 10, tenths % 10);
}

static void update_interest(struct conn *c)
{
    if (c->dead || !c->registered) {
        return;
    }

    bool want = o.raw ? c->out_off < c->out_len : mosquitto_want_write(c->mosq);
    if (want == c->want_write) {
        return;
    }

    struct epoll_event ev = { .events = EPOLLIN | (want ? EPOLLOUT : 0), .data.ptr = c };
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0) {
        c->want_write = want;
    }
}

static void unregister(struct conn *c)
{
    if (c->registered) {
        epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
        c->registered = false;
    }
}

/* --raw: the connection ended or broke; counted as an error unless the run is over (dead is set first then). */
static void raw_lost(struct conn *c, const char *why)
{
    if (!c->dead) {
        if (c->connected) {
            disconnects++;
            connected_count--;
            c->connected = false;
            note("connection %d lost: %s, %d publishes unacknowledged", c->index, why, c->outstanding);
        } else {
            connect_failures++;
            note("connection %d failed before its CONNACK: %s", c->index, why);
        }

        c->dead = true;
    }

    unregister(c);
}

/* Room for n more bytes at the end of the output buffer. */
static void raw_reserve(struct conn *c, size_t n)
{
    if (c->out_off == c->out_len) {
        c->out_off = c->out_len = 0;
    }

    if (c->out_len + n <= c->out_cap) {
        return;
    }

    if (c->out_off > 0) {
        memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
        c->out_len -= c->out_off;
        c->out_off = 0;
    }

    size_t cap = c->out_cap > 0 ? c->out_cap : 4096;
    while (cap < c->out_len + n) {
        cap *= 2;
    }

    if (cap != c->out_cap) {
        unsigned char *grown = realloc(c->out, cap);
        if (grown == NULL) {
            note("out of memory");
            exit(1);
        }

        c->out = grown;
        c->out_cap = cap;
    }
}

/* MQTT's remaining length (1 to 4 bytes); returns the bytes written. */
static size_t raw_put_length(unsigned char *at, size_t length)
{
    size_t n = 0;
    do {
        unsigned char b = (unsigned char)(length % 128);
        length /= 128;
        at[n++] = (unsigned char)(b | (length > 0 ? 128 : 0));
    } while (length > 0);
    return n;
}

static unsigned char *raw_put_string(unsigned char *at, const char *text, size_t length)
{
    *at++ = (unsigned char)(length >> 8);
    *at++ = (unsigned char)length;
    memcpy(at, text, length);
    return at + length;
}

/* Writes what the output buffer holds until the socket would block (the rest waits for EPOLLOUT). */
static void raw_flush(struct conn *c)
{
    while (!c->dead && c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
            c->last_write = now_s();
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        } else {
            raw_lost(c, n < 0 ? strerror(errno) : "send wrote nothing");
        }
    }
}

static void raw_put_fixed(struct conn *c, unsigned char type)
{
    raw_reserve(c, 2);
    c->out[c->out_len++] = type;
    c->out[c->out_len++] = 0;
}

/* CONNECT, MQTT 3.1.1, clean session, with the credentials if any. */
static void raw_put_connect(struct conn *c, const char *id)
{
    size_t id_length = strlen(id);
    size_t user_length = o.username != NULL ? strlen(o.username) : 0;
    size_t password_length = o.password != NULL ? strlen(o.password) : 0;
    size_t remaining = 10 + 2 + id_length + (o.username != NULL ? 2 + user_length : 0) + (o.password != NULL ? 2 + password_length : 0);
    raw_reserve(c, 5 + remaining);
    unsigned char *at = c->out + c->out_len;
    *at++ = 0x10;
    at += raw_put_length(at, remaining);
    at = raw_put_string(at, "MQTT", 4);
    *at++ = 4; /* protocol level: 3.1.1 */
    *at++ = (unsigned char)(0x02 | (o.username != NULL ? 0x80 : 0) | (o.password != NULL ? 0x40 : 0));
    *at++ = (unsigned char)(o.keepalive >> 8);
    *at++ = (unsigned char)o.keepalive;
    at = raw_put_string(at, id, id_length);
    if (o.username != NULL) {
        at = raw_put_string(at, o.username, user_length);
    }

    if (o.password != NULL) {
        at = raw_put_string(at, o.password, password_length);
    }

    c->out_len = (size_t)(at - c->out);
}

/* PUBLISH at QoS 1 into the output buffer; returns its packet id (1 to 65535, in turn). */
static int raw_put_publish(struct conn *c, const char *topic, size_t topic_length, const char *payload, size_t length)
{
    size_t remaining = 2 + topic_length + 2 + length;
    raw_reserve(c, 5 + remaining);
    unsigned char *at = c->out + c->out_len;
    *at++ = 0x32;
    at += raw_put_length(at, remaining);
    at = raw_put_string(at, topic, topic_length);
    int mid = c->next_mid;
    c->next_mid = mid == 65535 ? 1 : mid + 1;
    *at++ = (unsigned char)(mid >> 8);
    *at++ = (unsigned char)mid;
    memcpy(at, payload, length);
    c->out_len = (size_t)(at + length - c->out);
    return mid;
}

static void raw_packet(struct conn *c, unsigned char type, const unsigned char *body, size_t length)
{
    switch (type >> 4) {
    case 4: /* PUBACK */
        if (length != 2) {
            raw_lost(c, "a PUBACK that is not 2 bytes long");
            return;
        }

        on_publish(NULL, c, body[0] << 8 | body[1], 0, NULL);
        return;
    case 2: /* CONNACK */
        if (length != 2 || c->connected) {
            raw_lost(c, "an unexpected CONNACK");
        } else if (body[1] == 0) {
            c->connected = true;
            connected_count++;
        } else {
            connect_failures++;
            c->dead = true;
            note("connection %d refused by the broker: CONNACK return code %d", c->index, body[1]);
            unregister(c);
        }

        return;
    case 13: /* PINGRESP */
        return;
    default:
        raw_lost(c, "a packet a publisher does not expect");
    }
}

/* Reads until the socket would block, and handles every whole packet read. */
static void raw_read(struct conn *c)
{
    while (!c->dead) {
        ssize_t n = recv(c->fd, c->in + c->in_len, RAW_IN - c->in_len, 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }

        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        }

        if (n <= 0) {
            raw_lost(c, n == 0 ? "closed by the broker" : strerror(errno));
            return;
        }

        c->in_len += (size_t)n;
        size_t at = 0;
        while (!c->dead && c->in_len - at >= 2) {
            size_t remaining = 0, used = 1;
            int shift = 0;
            bool whole = false;
            while (used < 5 && at + used < c->in_len) {
                unsigned char b = c->in[at + used++];
                remaining |= (size_t)(b & 127) << shift;
                shift += 7;
                if ((b & 128) == 0) {
                    whole = true;
                    break;
                }
            }

            if (!whole) {
                if (used >= 5) {
                    raw_lost(c, "a malformed remaining length");
                }

                break;
            }

            if (c->in_len - at < used + remaining) {
                break;
            }

            raw_packet(c, c->in[at], c->in + at + used, remaining);
            at += used + remaining;
        }

        if (c->dead) {
            return;
        }

        memmove(c->in, c->in + at, c->in_len - at);
        c->in_len -= at;
        if (c->in_len == RAW_IN) {
            raw_lost(c, "a packet of 64 KiB or more from the broker");
            return;
        }
    }
}

/* A blocking connect, then non-blocking with TCP_NODELAY; the CONNECT is sent at once. Returns false on failure. */
static bool raw_open(struct conn *c, const struct addrinfo *address, const char *id)
{
    c->fd = socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, address->ai_protocol);
    if (c->fd < 0 || connect(c->fd, address->ai_addr, address->ai_addrlen) != 0) {
        note("connection %d to %s:%d failed: %s", c->index, o.host, o.port, strerror(errno));
        if (c->fd >= 0) {
            close(c->fd);
        }

        c->fd = -1;
        return false;
    }

    int on = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    c->in = malloc(RAW_IN);
    if (c->in == NULL) {
        note("out of memory");
        exit(1);
    }

    c->next_mid = 1;
    raw_put_connect(c, id);
    raw_flush(c);
    return true;
}

static void fill_window(struct conn *c)
{
    if (!sending || !c->connected || c->dead) {
        return;
    }

    int slot = phase_slot();
    char payload[160];
    if (o.raw) {
        if (c->out_off < c->out_len) {
            return; /* the last publishes are still being written: more when EPOLLOUT has taken them */
        }

        double sent_at = now_s();
        size_t topic_length = strlen(c->topic[slot]);
        while (c->outstanding < o.inflight) {
            int length = write_payload(c, slot, payload, sizeof payload);
            int mid = raw_put_publish(c, c->topic[slot], topic_length, payload, (size_t)length);
            c->outstanding++;
            c->sent[slot]++;
            c->sent_at[mid % SENT_RING] = sent_at;
            c->sent_mid[mid % SENT_RING] = mid;
            if (!o.batch) {
                raw_flush(c);
            }
        }

        raw_flush(c); /* every publish the window has room for, in one send */
        return;
    }

    /* libmosquitto writes each packet with a write() of its own; corked, the kernel sends them as one segment. */
    bool cork = o.batch && o.inflight - c->outstanding > 1;
    int on = 1, off = 0;
    if (cork) {
        setsockopt(c->fd, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
    }

    while (c->outstanding < o.inflight) {
        int length = write_payload(c, slot, payload, sizeof payload);
        int mid = 0;
        double sent_at = now_s();
        int rc = mosquitto_publish_v5(c->mosq, &mid, c->topic[slot], length, payload, o.qos, false, NULL);
        if (rc != MOSQ_ERR_SUCCESS) {
            publish_errors++;
            note("connection %d: publish failed: %s", c->index, mosquitto_strerror(rc));
            c->dead = true;
            if (c->connected) {
                connected_count--;
                c->connected = false;
            }

            unregister(c);
            return;
        }

        c->outstanding++;
        c->sent[slot]++;
        c->sent_at[mid % SENT_RING] = sent_at;
        c->sent_mid[mid % SENT_RING] = mid;
    }

    if (cork) {
        setsockopt(c->fd, IPPROTO_TCP, TCP_CORK, &off, sizeof off);
    }
}

static void loop_failed(struct conn *c, int rc, const char *what)
{
    if (!c->dead) {
        loop_errors++;
        note("connection %d: %s failed: %s (%d)", c->index, what, mosquitto_strerror(rc), rc);
        if (c->connected) {
            connected_count--;
            c->connected = false;
        }

        c->dead = true;
    }

    unregister(c);
}

/* One pass of the event loop: up to timeout_ms waiting for sockets, then reads, writes and new publishes. */
static void pump(int timeout_ms)
{
    struct epoll_event events[512];
    int n = epoll_wait(epfd, events, 512, timeout_ms);
    if (n < 0 && errno != EINTR) {
        note("epoll_wait: %s", strerror(errno));
        exit(1);
    }

    for (int i = 0; i < n; i++) {
        struct conn *c = events[i].data.ptr;
        if (c->dead) {
            unregister(c);
            continue;
        }

        if ((events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) && o.raw) {
            raw_read(c);
        } else if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
            int rc = mosquitto_loop_read(c->mosq, 1);
            if (rc != MOSQ_ERR_SUCCESS) {
                loop_failed(c, rc, "read");
                continue;
            }
        }

        if (c->dead) {
            unregister(c);
            continue;
        }

        if ((events[i].events & EPOLLOUT) && o.raw) {
            raw_flush(c);
        } else if (events[i].events & EPOLLOUT) {
            int rc = mosquitto_loop_write(c->mosq, 1);
            if (rc != MOSQ_ERR_SUCCESS) {
                loop_failed(c, rc, "write");
                continue;
            }
        }

        fill_window(c);
        update_interest(c);
    }
}

static void misc_all(void)
{
    double now = now_s();
    for (int i = 0; i < o.connections; i++) {
        struct conn *c = &conns[i];
        if (o.raw) {
            /* keep-alive: a PINGREQ when nothing was written for half the keep-alive */
            if (c->connected && !c->dead && now - c->last_write >= o.keepalive / 2.0) {
                raw_put_fixed(c, 0xC0);
                raw_flush(c);
                update_interest(c);
            }
        } else if (!c->dead) {
            int rc = mosquitto_loop_misc(c->mosq);
            if (rc != MOSQ_ERR_SUCCESS) {
                loop_failed(c, rc, "keepalive");
            }
        }
    }
}

enum count { SENT, ACKED, REFUSED };

/* A phase's count over every connection. */
static long long total(enum count which, int slot)
{
    long long sum = 0;
    for (int i = 0; i < o.connections; i++) {
        const struct conn *c = &conns[i];
        sum += which == SENT ? c->sent[slot] : which == ACKED ? c->acked[slot] : c->refused[slot];
    }

    return sum;
}

static long long outstanding_all(void)
{
    long long sum = 0;
    for (int i = 0; i < o.connections; i++) {
        if (!conns[i].dead) {
            sum += conns[i].outstanding;
        }
    }

    return sum;
}

struct phase_result {
    double seconds;
    double cpu, cpu_user, cpu_sys;
    long long sent, acked, refused, unacked;
    bool drained;
    double p50_ms, p99_ms, p999_ms, max_ms;
    long long latency_lost;
};

/* The p-th quantile of the phase's latencies in ms (nearest rank; the upper edge of its 10 µs bucket). */
static double latency_quantile(double p)
{
    if (latency_count == 0) {
        return 0;
    }

    long long rank = (long long)(p * (double)latency_count + 0.999999);
    rank = rank < 1 ? 1 : rank;
    long long seen = 0;
    for (long long b = 0; b < BUCKETS; b++) {
        seen += latency_buckets[b];
        if (seen >= rank) {
            double ms = (double)(b + 1) * BUCKET_US / 1000.0;
            return ms < latency_max * 1000 ? ms : latency_max * 1000;
        }
    }

    return latency_max * 1000;
}

/* Publishes for `seconds`, then stops and drains; the clock runs from the first publish to the last acknowledgement. */
static struct phase_result run_phase(enum phase which, double seconds, const char *label)
{
    struct phase_result r = { 0 };
    phase = which;
    int slot = phase_slot();
    double user0, sys0, user1, sys1;
    double cpu0 = cpu_s(&user0, &sys0);
    memset(latency_buckets, 0, sizeof latency_buckets);
    latency_count = latency_lost = 0;
    latency_max = 0;
    note("%s phase started", label);
    double start = now_s();
    double last_misc = start, last_report = start;
    long long last_acked = 0;
    sending = true;
    for (int i = 0; i < o.connections; i++) {
        fill_window(&conns[i]);
        update_interest(&conns[i]);
    }

    double stop_at = start + seconds;
    double drain_until = stop_at + o.drain_timeout;
    while (true) {
        double now = now_s();
        if (sending && now >= stop_at) {
            sending = false;
        }

        if (!sending && outstanding_all() == 0) {
            r.drained = true;
            break;
        }

        if (now >= drain_until || connected_count == 0) {
            break;
        }

        int wait_ms = 100;
        if (sending && (stop_at - now) * 1000 < wait_ms) {
            wait_ms = (int)((stop_at - now) * 1000) + 1;
        }

        pump(wait_ms);
        now = now_s();
        if (now - last_misc >= 1) {
            misc_all();
            last_misc = now;
        }

        if (o.progress > 0 && now - last_report >= o.progress) {
            long long acked = total(ACKED, slot);
            double u, s;
            double cpu = cpu_s(&u, &s) - cpu0;
            note("%s %5.0f s: %lld acknowledged (%.0f/s), %d connected, generator %.2f cores", label, now - start, acked,
                (acked - last_acked) / (now - last_report), connected_count, cpu / (now - start));
            last_acked = acked;
            last_report = now;
        }
    }

    r.seconds = now_s() - start;
    r.cpu = cpu_s(&user1, &sys1) - cpu0;
    r.cpu_user = user1 - user0;
    r.cpu_sys = sys1 - sys0;
    r.sent = total(SENT, slot);
    r.acked = total(ACKED, slot);
    r.refused = total(REFUSED, slot);
    r.unacked = r.sent - r.acked - r.refused;
    r.p50_ms = latency_quantile(0.50);
    r.p99_ms = latency_quantile(0.99);
    r.p999_ms = latency_quantile(0.999);
    r.max_ms = latency_max * 1000;
    r.latency_lost = latency_lost;
    if (!r.drained) {
        note("%s: %lld publishes still unacknowledged when the phase ended (drain timeout %.0f s or every connection lost)", label, r.unacked,
            o.drain_timeout);
    }

    return r;
}

static void usage(FILE *to)
{
    fprintf(to,
        "usage: saito-pubgen [options]\n"
        "  --host H              broker host (127.0.0.1)\n"
        "  --port P              broker port (1883)\n"
        "  --connections N       connections, one sensor each (320)\n"
        "  --inflight W          unacknowledged publishes per connection (20)\n"
        "  --warmup S            seconds of warm-up on devices of their own, not counted (0)\n"
        "  --duration S          measured seconds of publishing (30)\n"
        "  --qos Q               1 or 2 (1)\n"
        "  --mqtt V              3.1.1 or 5 (3.1.1)\n"
        "  --prefix P            client-id and device prefix; make it unique per run (pg<pid>)\n"
        "  --username U, --password W   credentials, if the broker wants them\n"
        "  --connect-timeout S   seconds for every connection to be accepted (30)\n"
        "  --drain-timeout S     seconds to wait for what is in flight after publishing stops (60)\n"
        "  --no-batch            send every publish in a TCP segment of its own (default: the publishes a connection\n"
        "                        sends after one read leave together, corked, as the .NET tool's batches do)\n"
        "  --raw                 MQTT 3.1.1 at QoS 1 written and parsed by this program instead of libmosquitto: one send\n"
        "                        for the publishes a read makes room for, one recv for what the broker sent\n"
        "  --progress S          seconds between progress lines on stderr (5; 0: none)\n"
        "  --quiet               the same as --progress 0\n"
        "Prints one JSON line to stdout. Exit 0 clean, 1 errors (counted in the JSON), 2 bad options.\n");
}

static bool parse_number(const char *name, const char *text, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || value < min || value > max) {
        fprintf(stderr, "saito-pubgen: %s must be a number from %g to %g, not '%s'\n", name, min, max, text);
        return false;
    }

    *out = value;
    return true;
}

static bool parse_options(int argc, char **argv)
{
    static char default_prefix[32];
    snprintf(default_prefix, sizeof default_prefix, "pg%ld", (long)getpid());
    o = (struct options){ .host = "127.0.0.1", .port = 1883, .connections = 320, .inflight = 20, .warmup = 0, .duration = 30, .qos = 1,
        .version = MQTT_PROTOCOL_V311, .prefix = default_prefix, .connect_timeout = 30, .drain_timeout = 60, .keepalive = 60, .batch = true, .progress = 5 };
    static const struct option longs[] = {
        { "host", required_argument, 0, 'h' }, { "port", required_argument, 0, 'p' }, { "connections", required_argument, 0, 'c' },
        { "inflight", required_argument, 0, 'w' }, { "warmup", required_argument, 0, 'W' }, { "duration", required_argument, 0, 'd' },
        { "qos", required_argument, 0, 'q' }, { "mqtt", required_argument, 0, 'm' }, { "prefix", required_argument, 0, 'P' },
        { "username", required_argument, 0, 'u' }, { "password", required_argument, 0, 'k' }, { "connect-timeout", required_argument, 0, 'C' },
        { "drain-timeout", required_argument, 0, 'D' }, { "quiet", no_argument, 0, 'Q' }, { "progress", required_argument, 0, 'R' }, { "no-batch", no_argument, 0, 'B' }, { "raw", no_argument, 0, 'X' }, { "help", no_argument, 0, '?' + 256 }, { 0, 0, 0, 0 },
    };
    double value;
    int opt;
    while ((opt = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (opt) {
        case 'h': o.host = optarg; break;
        case 'p': if (!parse_number("--port", optarg, 1, 65535, &value)) return false; o.port = (int)value; break;
        case 'c': if (!parse_number("--connections", optarg, 1, 100000, &value)) return false; o.connections = (int)value; break;
        case 'w': if (!parse_number("--inflight", optarg, 1, 65535, &value)) return false; o.inflight = (int)value; break;
        case 'W': if (!parse_number("--warmup", optarg, 0, 86400, &value)) return false; o.warmup = value; break;
        case 'd': if (!parse_number("--duration", optarg, 0.1, 86400, &value)) return false; o.duration = value; break;
        case 'q':
            if (strcmp(optarg, "1") != 0 && strcmp(optarg, "2") != 0) {
                fprintf(stderr, "saito-pubgen: --qos must be 1 or 2, not '%s'\n", optarg);
                return false;
            }
            o.qos = optarg[0] - '0';
            break;
        case 'm':
            if (strcmp(optarg, "3.1.1") == 0) {
                o.version = MQTT_PROTOCOL_V311;
            } else if (strcmp(optarg, "5") == 0 || strcmp(optarg, "5.0") == 0) {
                o.version = MQTT_PROTOCOL_V5;
            } else {
                fprintf(stderr, "saito-pubgen: --mqtt must be 3.1.1 or 5, not '%s'\n", optarg);
                return false;
            }
            break;
        case 'P':
            if (strlen(optarg) == 0 || strlen(optarg) > 40 || strpbrk(optarg, "/+#") != NULL) {
                fprintf(stderr, "saito-pubgen: --prefix must be 1 to 40 characters without / + #, not '%s'\n", optarg);
                return false;
            }
            o.prefix = optarg;
            break;
        case 'u': o.username = optarg; break;
        case 'k': o.password = optarg; break;
        case 'C': if (!parse_number("--connect-timeout", optarg, 0.1, 3600, &value)) return false; o.connect_timeout = value; break;
        case 'D': if (!parse_number("--drain-timeout", optarg, 0, 3600, &value)) return false; o.drain_timeout = value; break;
        case 'Q': o.progress = 0; break;
        case 'R': if (!parse_number("--progress", optarg, 0, 3600, &value)) return false; o.progress = value; break;
        case 'B': o.batch = false; break;
        case 'X': o.raw = true; break;
        case '?' + 256: usage(stdout); exit(0);
        default: usage(stderr); return false;
        }
    }

    if (optind < argc) {
        fprintf(stderr, "saito-pubgen: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return false;
    }

    if (o.raw && (o.qos != 1 || o.version != MQTT_PROTOCOL_V311)) {
        fprintf(stderr, "saito-pubgen: --raw publishes at QoS 1 over MQTT 3.1.1 only\n");
        return false;
    }

    if (o.password != NULL && o.username == NULL) {
        fprintf(stderr, "saito-pubgen: --password needs --username\n");
        return false;
    }

    return true;
}

static void print_phase(const char *name, const struct phase_result *r, bool last)
{
    printf("\"%s\":{\"seconds\":%.3f,\"sent\":%lld,\"acked\":%lld,\"refused\":%lld,\"unacked\":%lld,\"msgs_per_s\":%.1f,"
           "\"cpu_s\":%.3f,\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f,\"cpu_cores\":%.3f,\"cpu_us_per_msg\":%.2f,"
           "\"ack_p50_ms\":%.3f,\"ack_p99_ms\":%.3f,\"ack_p999_ms\":%.3f,\"ack_max_ms\":%.3f,\"latency_lost\":%lld}%s",
        name, r->seconds, r->sent, r->acked, r->refused, r->unacked, r->seconds > 0 ? r->acked / r->seconds : 0.0, r->cpu, r->cpu_user,
        r->cpu_sys, r->seconds > 0 ? r->cpu / r->seconds : 0.0, r->acked > 0 ? r->cpu * 1e6 / r->acked : 0.0, r->p50_ms, r->p99_ms, r->p999_ms, r->max_ms, r->latency_lost, last ? "" : ",");
}

int main(int argc, char **argv)
{
    if (!parse_options(argc, argv)) {
        return 2;
    }

    int major, minor, revision;
    mosquitto_lib_version(&major, &minor, &revision);
    mosquitto_lib_init();
    epfd = epoll_create1(0);
    conns = calloc((size_t)o.connections, sizeof *conns);
    if (epfd < 0 || conns == NULL) {
        note("out of resources: %s", strerror(errno));
        return 1;
    }

    struct addrinfo *address = NULL;
    if (o.raw) {
        char port[16];
        snprintf(port, sizeof port, "%d", o.port);
        struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
        int rc = getaddrinfo(o.host, port, &hints, &address);
        if (rc != 0) {
            note("cannot resolve %s: %s", o.host, gai_strerror(rc));
            return 1;
        }
    }

    long long start_ts = wall_ms() - TWELVE_HOURS_MS;
    double connect_started = now_s();
    for (int i = 0; i < o.connections; i++) {
        struct conn *c = &conns[i];
        c->index = i;
        c->last_ts[0] = c->last_ts[1] = start_ts;
        snprintf(c->topic[0], sizeof c->topic[0], "saito/%sw-hub%03d/%sw-h%03d-d00/biosensor", o.prefix, i, o.prefix, i);
        snprintf(c->topic[1], sizeof c->topic[1], "saito/%s-hub%03d/%s-h%03d-d00/biosensor", o.prefix, i, o.prefix, i);
        char id[64];
        snprintf(id, sizeof id, "%s-c%03d", o.prefix, i);
        if (o.raw) {
            if (!raw_open(c, address, id)) {
                connect_failures++;
                c->dead = true;
                continue;
            }
        } else {
            c->mosq = mosquitto_new(id, true, c);
            if (c->mosq == NULL) {
                note("mosquitto_new failed: %s", strerror(errno));
                return 1;
            }

            mosquitto_int_option(c->mosq, MOSQ_OPT_PROTOCOL_VERSION, o.version);
            mosquitto_int_option(c->mosq, MOSQ_OPT_SEND_MAXIMUM, o.inflight);
            mosquitto_int_option(c->mosq, MOSQ_OPT_TCP_NODELAY, 1);
            mosquitto_connect_v5_callback_set(c->mosq, on_connect);
            mosquitto_disconnect_v5_callback_set(c->mosq, on_disconnect);
            mosquitto_publish_v5_callback_set(c->mosq, on_publish);
            if (o.username != NULL) {
                mosquitto_username_pw_set(c->mosq, o.username, o.password);
            }

            int rc = mosquitto_connect_bind_v5(c->mosq, o.host, o.port, o.keepalive, NULL, NULL);
            if (rc != MOSQ_ERR_SUCCESS) {
                connect_failures++;
                c->dead = true;
                note("connection %d to %s:%d failed: %s", i, o.host, o.port, rc == MOSQ_ERR_ERRNO ? strerror(errno) : mosquitto_strerror(rc));
                continue;
            }

            c->fd = mosquitto_socket(c->mosq);
        }

        struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
            note("epoll_ctl: %s", strerror(errno));
            return 1;
        }

        c->registered = true;
        update_interest(c);
        pump(0); /* take CONNACKs as they come, so a slow broker's backlog does not fill */
    }

    /* Every connection accepted (CONNACK) or given up on. */
    while (now_s() - connect_started < o.connect_timeout) {
        int settled = 0;
        for (int i = 0; i < o.connections; i++) {
            settled += conns[i].connected || conns[i].dead;
        }

        if (settled == o.connections) {
            break;
        }

        pump(100);
    }

    double connect_seconds = now_s() - connect_started;
    int never = 0;
    for (int i = 0; i < o.connections; i++) {
        if (!conns[i].connected && !conns[i].dead) {
            never++;
            conns[i].dead = true;
            unregister(&conns[i]);
        }
    }

    if (never > 0) {
        connect_failures += never;
        note("%d connections had no CONNACK within %.0f s", never, o.connect_timeout);
    }

    if (o.progress > 0) {
        if (o.raw) {
            note("%d of %d connections up in %.1f s (raw MQTT 3.1.1)", connected_count, o.connections, connect_seconds);
        } else {
            note("%d of %d connections up in %.1f s (libmosquitto %d.%d.%d)", connected_count, o.connections, connect_seconds, major, minor, revision);
        }
    }

    struct phase_result warm = { 0 }, measured = { 0 };
    if (connected_count > 0 && o.warmup > 0) {
        warm = run_phase(PHASE_WARMUP, o.warmup, "warm-up");
    }

    if (connected_count > 0) {
        measured = run_phase(PHASE_MEASURED, o.duration, "measured");
    }

    phase = PHASE_DONE;
    for (int i = 0; i < o.connections; i++) {
        if (conns[i].connected && !conns[i].dead) {
            conns[i].dead = true; /* a clean end: on_disconnect is not an error */
            if (o.raw) {
                static const unsigned char disconnect[] = { 0xE0, 0 };
                if (send(conns[i].fd, disconnect, sizeof disconnect, MSG_NOSIGNAL) < 0) {
                    /* the run is over and counted; the socket closes below either way */
                }
            } else {
                mosquitto_disconnect_v5(conns[i].mosq, 0, NULL);
            }
        }
    }

    for (int i = 0; i < o.connections; i++) {
        if (o.raw) {
            if (conns[i].fd > 0) {
                close(conns[i].fd);
            }

            free(conns[i].in);
            free(conns[i].out);
        } else {
            mosquitto_destroy(conns[i].mosq);
        }
    }

    if (address != NULL) {
        freeaddrinfo(address);
    }

    long long errors = connect_failures + disconnects + publish_errors + loop_errors + warm.unacked + measured.unacked + warm.refused + measured.refused;
    printf("{\"tool\":\"saito-pubgen\",\"transport\":\"%s\",\"libmosquitto\":\"%d.%d.%d\",\"host\":\"%s\",\"port\":%d,\"connections\":%d,\"connected\":%d,"
           "\"inflight\":%d,\"qos\":%d,\"mqtt\":\"%s\",\"prefix\":\"%s\",\"readings_per_message\":1,\"batch\":%s,\"connect_seconds\":%.3f,",
        o.raw ? "raw" : "libmosquitto", major, minor, revision, o.host, o.port, o.connections, o.connections - (int)connect_failures, o.inflight, o.qos,
        o.version == MQTT_PROTOCOL_V5 ? "5" : "3.1.1", o.prefix, o.batch ? "true" : "false", connect_seconds);
    print_phase("warmup", &warm, false);
    print_phase("measured", &measured, false);
    printf("\"acked\":%lld,\"msgs_per_s\":%.1f,\"cpu_cores\":%.3f,\"total_acked\":%lld,\"total_sent\":%lld,"
           "\"connect_failures\":%lld,\"disconnects\":%lld,\"publish_errors\":%lld,\"loop_errors\":%lld,\"errors\":%lld}\n",
        measured.acked, measured.seconds > 0 ? measured.acked / measured.seconds : 0.0, measured.seconds > 0 ? measured.cpu / measured.seconds : 0.0,
        warm.acked + measured.acked, warm.sent + measured.sent, connect_failures, disconnects, publish_errors, loop_errors, errors);
    fflush(stdout);
    mosquitto_lib_cleanup();
    free(conns);
    return errors == 0 ? 0 : 1;
}

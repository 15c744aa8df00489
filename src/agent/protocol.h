/*
 * Shared between the in-guest agent and the host client (src/guest): the
 * channel name and the base64 codec used for every binary "data" field.
 * The wire format itself is described in docs/agent-protocol.md.
 * This header must stay libc-only: the agent links nothing but libc and json-c.
 */
#pragma once

#include <stddef.h>

/*
 * virtio-serial port names, PREFIX0 to PREFIX(NPORTS-1); the domain XML names
 * the channels the same way. QEMU's socket for a port takes one host client
 * at a time, so each concurrent host (a run, a second shell's exec) needs its
 * own port; the agent serves each with its own state.
 */
#define VN_AGENT_PORT_PREFIX "org.vnuma.agent."
#define VN_AGENT_PORT_NAME   VN_AGENT_PORT_PREFIX "0"
#define VN_AGENT_NPORTS      4

/* Protocol revision, reported by "hello"; bump on incompatible changes. */
#define VN_AGENT_PROTOCOL 1

/* Largest file "read" returns; /proc and /sys files are tiny, this guards RAM. */
#define VN_AGENT_READ_MAX (64u << 20)

/* Largest "length" of a chunked read (read with "offset"); vnuma cp asks for 1 MiB. */
#define VN_AGENT_CHUNK_MAX (4u << 20)

/* Most entries one "readdir" reply lists: a bigger directory fails with EFBIG. */
#define VN_AGENT_READDIR_MAX 65536

/*
 * Most commands "exec" runs at once; one more is refused with EBUSY. The
 * scenario schema keeps a run within it (scenario.h, VN_SCN_RUNNING_MAX).
 */
#define VN_AGENT_MAX_JOBS 16

/* Most random bytes one "wake" mixes into a restored guest's pool (the kernel's pool is 256 bits). */
#define VN_AGENT_WAKE_SEED_MAX 512

/* Returns the encoded length (excluding the NUL). out needs vn_base64_encoded_len()+1 bytes. */
size_t vn_base64_encode(const void *in, size_t len, char *out);
#define vn_base64_encoded_len(n) ((((n) + 2) / 3) * 4)

/*
 * Decodes into out (at least len/4*3+3 bytes); whitespace is not accepted.
 * Returns the decoded length, or -1 on malformed input.
 */
long vn_base64_decode(const char *in, size_t len, void *out);

/**
 * The C allocator's settings every process of the service runs with (docs/operations.md#memory): the image sets them
 * (deploy/Dockerfile), and so do `serp-api cluster up` and the soak, since glibc reads them from the environment once,
 * before any JavaScript runs, so a process cannot set them for itself.
 *
 * Why: an embedded service's RSS climbed through an hour of the soak while every thread's V8 heap stayed flat; the
 * growth was glibc's malloc arenas (docs/benchmarks.md#the-soak). Multi-megabyte buffers that live a moment (page
 * bodies up to the 8 MB cap, zlib's output chunks, a gzip bomb's inflated chunks) raise glibc's mmap threshold as
 * soon as one is freed, so the next ones come from a thread's arena instead of their own mapping, and an arena keeps
 * what it once held. A fixed threshold (glibc's own starting value, 128 KiB) keeps every such buffer in a mapping of
 * its own, given back when it is freed; two arenas instead of up to eight a core let the threads reuse each other's
 * free space. Both are plain environment variables of glibc (mallopt(3)); other C libraries ignore them.
 */
export const ALLOCATOR_ENV = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '131072',
} as const;

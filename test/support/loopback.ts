/**
 * A test's traffic stays on 127.0.0.0/8 (docs/style.md). Chromium would otherwise fetch what a real Google page links
 * (gstatic images and scripts): with these resolver rules no host name resolves but loopback ones, so nothing is even
 * looked up. Every Chromium the suite starts gets them: through SERP_CHROMIUM_HOST_RULES for a service, as a launch
 * flag for a browser a test drives itself. (Chromium still connects a UDP socket to a public IPv6 address to learn
 * whether IPv6 is reachable: a connect that sends no packet, checked with strace.)
 */
export const CHROMIUM_HOST_RULES = 'MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost';
export const CHROMIUM_LOOPBACK_ARG = `--host-resolver-rules=${CHROMIUM_HOST_RULES}`;

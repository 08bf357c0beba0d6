// A library with 1,600 bytes of initial-exec TLS, for the NVTX injection test:
// dlopen()ed first, it uses up what glibc keeps free in its static TLS block
// for libraries loaded late, as libraries such as libgomp do in a real job.
// A library that itself needs initial-exec TLS then fails to load
// ("cannot allocate memory in static TLS block").
extern "C" {
__attribute__((tls_model("initial-exec"))) __thread char ddpscope_tls_hog[1600];

__attribute__((visibility("default"))) char* ddpscope_tls_hog_touch() { return ddpscope_tls_hog; }
}

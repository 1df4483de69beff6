// NVRTC's automatic precompiled headers (-pch, CUDA 12.8+): the first compile in a process saves
// the parsed state of its #include prefix (every GEMM kernel's is the same: kernel.cuh and the CCCL
// headers under it, most of its front-end time), and later compiles in the process with the same
// prefix and options load it instead of parsing the headers again.
//
// Measured (NVRTC 13.0, bench/results/2026-12-01-nvrtc-pch.md): 1.5-2.1 s per GEMM kernel without,
// the first with PCH 0.3-0.6 s slower (it writes a 131 MB file), each later one 0.6-0.9 s.
//
// A PCH holds addresses of NVRTC's PCH heap in the process that made it ("incompatible precompiled
// header heap allocation address" in any other process): it cannot be kept across processes, so
// it lives in a private folder per process under the temp dir, never in the disk cache, and never
// enters a cache key (the cubin does not depend on it: the cpu tests compare the bytes).
//
// NVRTC checks a PCH against the compile's options, but not against the contents of the in-memory
// headers it was made from: each Compiler therefore puts its PCH into a subfolder named by its
// headers' digest, so a changed header set never meets an old PCH.
#pragma once

#include <filesystem>

namespace tilecast::jit {

// Whether compiles use precompiled headers: on unless TILECAST_JIT_PCH=0.
bool pch_enabled();

// The process's PCH folder, made on first use under the system temp dir (and removed at exit);
// empty when it cannot be made (then compiles go without PCH). Thread-safe.
const std::filesystem::path& pch_folder();

// Makes a folder "tilecast-pch-<pid>-<random>" under `base` for this process, first removing the
// ones of processes that no longer run (a killed process leaves its folder and PCH behind). A
// process of another pid namespace sharing the temp dir may be taken for gone: losing its folder
// costs it its PCH (NVRTC then compiles without), never a wrong cubin.
// Returns the folder, or an empty path on failure. pch_folder() calls it once.
std::filesystem::path make_pch_folder(const std::filesystem::path& base);

}  // namespace tilecast::jit

// The disk cache of compiled kernels. Layout (docs/jit.md):
//   <dir>/v1/<key>.tcjit   one entry: a text header (key, lowered name, resource report, sizes,
//                          payload hash), a blank line, then the NVRTC log and the cubin
//   <dir>/v1/<key>.cu      the generated source with its name expression and options, for people
//   <dir>/v1/<key>.cubin   only with TILECAST_JIT_DEBUG>=2, for cuobjdump -sass
// Each file is written to a unique temporary in the same folder, fsynced and renamed over the
// final name, so concurrent writers of one key leave one whole file and readers never see a torn
// one; a killed writer's temporary is removed by a later first store, once an hour old. Nothing in
// an entry or its name depends on the folder's path: a copied folder still hits.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>

#include "jit/compiler.hpp"
#include "jit/hash.hpp"

namespace tilecast::jit {

class DiskCache {
 public:
  // $TILECAST_CACHE_DIR, else $XDG_CACHE_HOME/tilecast, else $HOME/.cache/tilecast; empty when
  // none of these is set (no disk cache).
  static std::filesystem::path default_dir();

  explicit DiskCache(std::filesystem::path dir);  // an empty path disables the cache

  bool enabled() const { return !dir_.empty(); }
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path entry_path(const Hash128& key) const;

  // The entry for key; nullopt when absent, unreadable, truncated or not matching key.
  std::optional<CompiledKernel> load(const Hash128& key) const;

  // Writes the entry (and the readable .cu) atomically. Throws tilecast::Error on I/O failure.
  // The first store of a process into a folder also removes writers' temporaries older than
  // kStaleTemporary (sweep_temporaries).
  void store(const Hash128& key, const CompiledKernel& kernel, const KernelSpec& spec,
             bool with_cubin_file = false) const;

  static constexpr std::chrono::hours kStaleTemporary{1};

 private:
  std::filesystem::path folder() const;
  void sweep_temporaries() const;
  std::filesystem::path dir_;
};

}  // namespace tilecast::jit

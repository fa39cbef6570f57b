# Sourced by the scripts that install something: one cache directory outside the clone for what
# does not change between runs, the way rust-cache keeps a CI job's tools and builds.
#
#   SQS_BACKPRESSURE_CACHE   the cache (default ~/.cache/sqs-backpressure; an empty directory
#                            forces a cold run). Holds:
#     tools/<tool>-<version>-<toolchain>/   cargo-hack, cargo-deny, cargo-machete, cargo-nextest
#     envs/<name>-<key>/                    the emulators', LocalStack's, SAM's, fauxqs's and
#                                           redis's environments; .venv, .venv-sam, … in the
#                                           clone are links to them
#     target/<toolchain>/                   .ci/run's cargo target dir
# A key is a hash of what the entry is built from (a pin, a lock file, the toolchain), so a
# change to any of them builds a new entry and leaves the old one for a checkout still on it.
# Every entry is made by the scripts that use it, under a lock, and marked complete last.

cache_root=${SQS_BACKPRESSURE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sqs-backpressure}

cache_log() { printf 'cache: %s\n' "$*" >&2; }

# A short hash of the files and words given (a file's content, a word as itself).
cache_key() {
  local part
  for part in "$@"; do
    if [ -f "$part" ]; then cat "$part"; else printf '%s\n' "$part"; fi
  done | sha256sum | cut -c1-12
}

# The toolchain a build depends on, as a name: rustc's full version line, hashed.
cache_toolchain() {
  rustc -vV | sha256sum | cut -c1-12
}

# The cargo tools the checks run, each at one version.
cache_tool_pin() {
  case "$1" in
    hack) echo 0.6.46 ;;
    deny) echo 0.20.2 ;;
    machete) echo 0.9.2 ;;
    nextest) echo 0.9.143 ;;
    *) cache_log "no pin for cargo-$1"; return 1 ;;
  esac
}

# cache_tool TOOL: the pinned cargo subcommand, installed into the cache when the machine has no
# copy at that version (a debug build: each runs for seconds, and optimised they took minutes
# longer to build); its bin directory goes first on PATH.
cache_tool() {
  local tool=$1 version have
  version=$(cache_tool_pin "$tool") || return 1
  have=$(cargo "$tool" --version 2>/dev/null | head -1 || true)
  case "$have" in
    *" $version" | "$version" | *" $version "*) return 0 ;;
  esac
  local home
  home="$cache_root/tools/$tool-$version-$(cache_toolchain)"
  mkdir -p "$cache_root/tools"
  (
    exec 7>"$home.lock"
    flock 7
    if [ ! -f "$home/.complete" ]; then
      cache_log "installing cargo-$tool $version into ${home} (once a cache; a minute or three)"
      rm -rf "$home"
      cargo install --locked --quiet --debug --root "$home" "cargo-$tool@$version"
      touch "$home/.complete"
    fi
  )
  export PATH="$home/bin:$PATH"
}

# cache_env LINK NAME MAKE KEY-PARTS...: the cache's environment for NAME at that key, made by
# `MAKE DIR` (a function of the caller's) when missing, and LINK (in the clone) pointed at it.
cache_env() {
  local link=$1 name=$2 make=$3
  shift 3
  local dir
  dir="$cache_root/envs/$name-$(cache_key "$@")"
  mkdir -p "$cache_root/envs"
  (
    exec 7>"$dir.lock"
    flock 7
    if [ ! -f "$dir/.complete" ]; then
      rm -rf "$dir"
      mkdir -p "$dir"
      "$make" "$dir"
      touch "$dir/.complete"
    fi
  ) || return 1
  if [ "$(readlink "$link" 2>/dev/null)" != "$dir" ]; then
    rm -rf "$link"
    ln -s "$dir" "$link"
  fi
}

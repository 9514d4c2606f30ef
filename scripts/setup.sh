#!/usr/bin/env bash
# Installs the Debian packages dtb needs to build and test, only those missing.
# Idempotent; runs apt-get update only when something must be installed.
set -euo pipefail

packages=(cmake gcc make ninja-build pkg-config libzstd-dev libcmocka-dev libgomp1 python3
          # dtbprobe serve, and its tests: the HTTP library, pytest, a real browser and its driver
          libmicrohttpd-dev python3-pytest chromium chromium-driver python3-selenium
          # the independent reader of docs/FORMAT.md decodes blocks with the zstd command
          zstd
          # the public header's C++ compile matrix (tests/cxx_header.sh): both C++ compilers
          g++ clang
          # dtbgen across ranks (optional MPI build) and its tests
          openmpi-bin libopenmpi-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

#!/usr/bin/env bash
# Makes sure Debian's chromium package is installed, for the browser test (tests/browser).
# Installs it with apt-get only when /usr/bin/chromium is missing; never downloads a browser build.
# Idempotent: when chromium is present it prints its path and exits at once.
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [ -x "$CHROMIUM" ]; then
  echo "$CHROMIUM"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo > /dev/null 2>&1; then
    SUDO="sudo -n"
  else
    echo "ensure-chromium: $CHROMIUM is missing and this is not root (no sudo); install the 'chromium' package" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
# Bounded: a stuck mirror must not hang CI forever.
timeout 600 $SUDO apt-get update -qq
timeout 900 $SUDO apt-get install -y -qq chromium > /dev/null

if [ ! -x "$CHROMIUM" ]; then
  echo "ensure-chromium: apt-get finished but $CHROMIUM is still missing" >&2
  exit 1
fi
echo "$CHROMIUM"

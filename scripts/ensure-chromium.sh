#!/usr/bin/env bash
# Makes sure Debian's chromium and a CJK font are installed, for the browser tests (tests/browser; the README's
# screenshot shows the Chinese UI). Installs them with apt-get only when missing; never downloads a browser build.
# Idempotent: when both are present it prints chromium's path and exits at once.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
FONT_PACKAGE=fonts-wqy-microhei

has_cjk_font() {
  command -v fc-list > /dev/null 2>&1 && [ -n "$(fc-list :lang=zh 2> /dev/null)" ]
}

missing=()
[ -x "$CHROMIUM" ] || missing+=(chromium)
has_cjk_font || missing+=("$FONT_PACKAGE")
if [ ${#missing[@]} -eq 0 ]; then
  echo "$CHROMIUM"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo > /dev/null 2>&1; then
    SUDO="sudo -n"
  else
    echo "ensure-chromium: missing ${missing[*]} and this is not root (no sudo); install: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
# Bounded: a stuck mirror must not hang CI forever.
timeout 600 $SUDO apt-get update -qq
timeout 900 $SUDO apt-get install -y -qq "${missing[@]}" > /dev/null

if [ ! -x "$CHROMIUM" ]; then
  echo "ensure-chromium: apt-get finished but $CHROMIUM is still missing" >&2
  exit 1
fi
has_cjk_font || echo "ensure-chromium: warning: no CJK font found after installing $FONT_PACKAGE; Chinese text in screenshots shows as boxes" >&2
echo "$CHROMIUM"

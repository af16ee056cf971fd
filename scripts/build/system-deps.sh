#!/usr/bin/env bash
# System packages the course needs besides Python: bubblewrap (isolates student code during
# grading), chromium (the headless browser test) and a Korean font for chromium (fonts-nanum,
# 10 MB download, 33 MB installed: the browser test's Korean widget panel; matplotlib's figures
# bring their own font). Installs them with apt-get when missing and running as root;
# otherwise says what to install.
set -euo pipefail
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v chromium >/dev/null 2>&1 || [ -n "${COURSE_SKIP_BROWSER:-}" ] || missing+=(chromium)
if [ -z "${COURSE_SKIP_BROWSER:-}" ] && ! fc-list :lang=ko 2>/dev/null | grep -q .; then
  missing+=(fonts-nanum)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing: ${missing[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "NOTE: please install ${missing[*]} (e.g. sudo apt-get install ${missing[*]})." >&2
  echo "      Without bubblewrap, grading refuses to run unless COURSE_ALLOW_UNSANDBOXED=1." >&2
fi

#!/usr/bin/env bash
# tests/filecheck/run.sh FILE: runs FILE's "RUN:" lines the way LLVM's lit
# does, for ptxwave's FileCheck tests.
#
# A RUN line is a comment ("// RUN:" in PTX, "; RUN:" in .pwir) holding a
# shell pipeline.  %s is replaced by FILE, a leading or piped `ptxwave` by
# $PTXWAVE (the built binary), `FileCheck` by $FILECHECK (FileCheck-22);
# `not CMD` succeeds when CMD fails.  Pipelines run with pipefail; the test
# fails at the first RUN line that fails.
set -uo pipefail
file=$1
: "${PTXWAVE:?PTXWAVE must name the ptxwave binary}"
FILECHECK=${FILECHECK:-FileCheck-22}
not() { if "$@"; then return 1; else return 0; fi; }
export -f not
n=0
while IFS= read -r line; do
  cmd=${line#*RUN:}
  cmd=${cmd//%s/$file}
  cmd=$(sed -E "s#(^|[|] *)ptxwave #\1$PTXWAVE #g; s#(^|[|] *)not ptxwave #\1not $PTXWAVE #g; s#(^|[|] *)FileCheck(-22)? #\1$FILECHECK #g" <<<"$cmd")
  n=$((n + 1))
  if ! bash -o pipefail -c "$cmd"; then
    echo "FAILED: RUN line $n of $file:" >&2
    echo "  $cmd" >&2
    exit 1
  fi
done < <(grep -E '^[[:space:]]*(//|;)[[:space:]]*RUN:' "$file")
if [ "$n" -eq 0 ]; then
  echo "$file: no RUN lines" >&2
  exit 1
fi

#!/bin/bash
# tests/docs/check-words.sh -- `make check-docs`: the repository speaks of the software only.
# Fails on words that tell how the work was organized rather than what the software does: work
# sessions, issue numbers, branch names of the development (s14-shmfast, ...), audits of work
# items. History lives in git; a document cites a commit hash where a reader needs it.
#
#   tests/docs/check-words.sh [DIR]   scan the files git tracks in DIR (default: this checkout)
#                                     plus any untracked, unignored ones (a new file counts too)
#
# Each hit prints as file:line: text. Exit 1 on any hit, 0 on none.
set -u
DIR=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$DIR" || exit 2

# The words (extended regular expressions, matched without regard to case).
words=(
    '\bsessions?\b'                      # "twelfth session", "this session"
    '\bissues? ?#?[0-9]+'                # "issue 7", "Issue 8's note", "issues 7/8"
    'issue-audit'                        # the removed audit page
    '\baudit(s|ed)?\b'                   # audits of work items
    '\bs[0-9]{1,3}-[a-z]'                # branch names: s14-shmfast, s17-flakes
    '\bthis branch\b'
)
pattern=$(IFS='|'; echo "${words[*]}")

# Where such a word is part of the software, allowed narrowly: "path:regex" (the regex is matched
# against the hit's text). Keep each with the reason.
allow=(
    # this script names the words it looks for
    'tests/docs/check-words.sh:.*'
)

hits=0
while IFS= read -r -d '' file; do
    [ -f "$file" ] || continue
    while IFS= read -r hit; do
        text=${hit#*:}
        ok=0
        for a in "${allow[@]}"; do
            if [ "$file" = "${a%%:*}" ] && [[ $text =~ ${a#*:} ]]; then ok=1; break; fi
        done
        [ $ok = 1 ] && continue
        echo "$file:$hit"
        hits=$((hits + 1))
    done < <(grep -I -n -i -E "$pattern" -- "$file" 2>/dev/null)
done < <(git ls-files -z --cached --others --exclude-standard)

if [ $hits -gt 0 ]; then
    echo "FAIL check-docs: $hits line(s) above speak of how the work was organized (sessions, issue" \
         "numbers, branch names, audits); say what the software does, cite a commit for history"
    exit 1
fi
echo "check-docs: no session, issue, branch or audit words in $(git ls-files | wc -l) tracked files"

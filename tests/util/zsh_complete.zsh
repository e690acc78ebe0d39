# Prints the candidates zsh's completion system offers for the command line "$2",
# with the completion functions in directory $1 (after zsh-capture-completion).
zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z "fpath=($1 \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z 'null-line () { echo -n $'\''\0'\'' }'
zpty -w z 'compprefuncs=( null-line )'
zpty -w z 'comppostfuncs=( null-line exit )'
zpty -w z "zstyle ':completion:*' list-grouped false"
zpty -w z "zstyle ':completion:*' insert-tab false"
zpty -w z "zstyle ':completion:*' list-separator ''"
zpty -w z 'compadd () {
  [[ ${@[1,-1]} == *-O* || ${@[1,-1]} == *-A* || ${@[1,-1]} == *-D* ]] && { builtin compadd "$@"; return $? }
  typeset -a __hits __dscr __tmp
  if (( $@[(I)-d] )); then
    __tmp=${@[$[${@[(i)-d]}+1]]}
    if [[ $__tmp == \(* ]]; then eval "__dscr=$__tmp"; else __dscr=( "${(@P)__tmp}" ); fi
  fi
  builtin compadd -A __hits -D __dscr "$@"
  [[ -n $__hits ]] || return
  local dscr
  for i in {1..$#__hits}; do
    (( $#__dscr >= $i )) && dscr=" -- ${${__dscr[$i]}##$__hits[$i] #}" || dscr=
    echo -E - $IPREFIX$__hits[$i]$dscr
  done
}'
zpty -w z "tab () { zle complete-word ; }"
zpty -w z "zle -N tab"
zpty -w z "bindkey '^I' tab"
zpty -w z "$2"$'\t'
integer tog=0
local chunk all=""
integer waited=0
while (( waited < 100 )); do
  if zpty -rt z chunk; then all+=$chunk; waited=0; else sleep 0.1; (( waited++ )); fi
  [[ $all == *$'\0'*$'\0'* ]] && break
done
local -a parts
parts=( "${(@ps:\0:)all}" )
print -r -- "${parts[2]}" | tr -d '\r' | grep -v '^$'
exit 0

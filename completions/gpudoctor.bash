_gpudoctor() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="gpudoctor"
                ;;
            gpudoctor,bundle)
                cmd="gpudoctor__subcmd__bundle"
                ;;
            gpudoctor,check)
                cmd="gpudoctor__subcmd__check"
                ;;
            gpudoctor,completions)
                cmd="gpudoctor__subcmd__completions"
                ;;
            gpudoctor,config)
                cmd="gpudoctor__subcmd__config"
                ;;
            gpudoctor,devices)
                cmd="gpudoctor__subcmd__devices"
                ;;
            gpudoctor,diff)
                cmd="gpudoctor__subcmd__diff"
                ;;
            gpudoctor,explain)
                cmd="gpudoctor__subcmd__explain"
                ;;
            gpudoctor,fleet)
                cmd="gpudoctor__subcmd__fleet"
                ;;
            gpudoctor,help)
                cmd="gpudoctor__subcmd__help"
                ;;
            gpudoctor,libs)
                cmd="gpudoctor__subcmd__libs"
                ;;
            gpudoctor,man)
                cmd="gpudoctor__subcmd__man"
                ;;
            gpudoctor,mcp)
                cmd="gpudoctor__subcmd__mcp"
                ;;
            gpudoctor,recommend)
                cmd="gpudoctor__subcmd__recommend"
                ;;
            gpudoctor,schema)
                cmd="gpudoctor__subcmd__schema"
                ;;
            gpudoctor,smoke)
                cmd="gpudoctor__subcmd__smoke"
                ;;
            gpudoctor,toolkit)
                cmd="gpudoctor__subcmd__toolkit"
                ;;
            gpudoctor__subcmd__help,bundle)
                cmd="gpudoctor__subcmd__help__subcmd__bundle"
                ;;
            gpudoctor__subcmd__help,check)
                cmd="gpudoctor__subcmd__help__subcmd__check"
                ;;
            gpudoctor__subcmd__help,completions)
                cmd="gpudoctor__subcmd__help__subcmd__completions"
                ;;
            gpudoctor__subcmd__help,config)
                cmd="gpudoctor__subcmd__help__subcmd__config"
                ;;
            gpudoctor__subcmd__help,devices)
                cmd="gpudoctor__subcmd__help__subcmd__devices"
                ;;
            gpudoctor__subcmd__help,diff)
                cmd="gpudoctor__subcmd__help__subcmd__diff"
                ;;
            gpudoctor__subcmd__help,explain)
                cmd="gpudoctor__subcmd__help__subcmd__explain"
                ;;
            gpudoctor__subcmd__help,fleet)
                cmd="gpudoctor__subcmd__help__subcmd__fleet"
                ;;
            gpudoctor__subcmd__help,help)
                cmd="gpudoctor__subcmd__help__subcmd__help"
                ;;
            gpudoctor__subcmd__help,libs)
                cmd="gpudoctor__subcmd__help__subcmd__libs"
                ;;
            gpudoctor__subcmd__help,man)
                cmd="gpudoctor__subcmd__help__subcmd__man"
                ;;
            gpudoctor__subcmd__help,mcp)
                cmd="gpudoctor__subcmd__help__subcmd__mcp"
                ;;
            gpudoctor__subcmd__help,recommend)
                cmd="gpudoctor__subcmd__help__subcmd__recommend"
                ;;
            gpudoctor__subcmd__help,schema)
                cmd="gpudoctor__subcmd__help__subcmd__schema"
                ;;
            gpudoctor__subcmd__help,smoke)
                cmd="gpudoctor__subcmd__help__subcmd__smoke"
                ;;
            gpudoctor__subcmd__help,toolkit)
                cmd="gpudoctor__subcmd__help__subcmd__toolkit"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        gpudoctor)
            opts="-q -v -h -V --format --json --fail-on --only --skip --root --timeout --from --user --nvml-lib --python --python-import --cuda-lib --matmul-size --mem-fraction --transfer-size --nccl --nccl-lib --image --no-smoke --quick --preflight --since --since-boot --output --baseline --fix-script --expect-gpus --color --quiet --verbose --config --no-config --help --version check toolkit libs devices smoke recommend fleet diff explain config schema bundle mcp completions man help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "human json markdown junit prometheus html" -- "${cur}"))
                    return 0
                    ;;
                --fail-on)
                    COMPREPLY=($(compgen -W "error warning never" -- "${cur}"))
                    return 0
                    ;;
                --only)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --skip)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nvml-lib)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cuda-lib)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --matmul-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mem-fraction)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --transfer-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nccl-lib)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --image)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preflight)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --since)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --baseline)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --expect-gpus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__bundle)
            opts="-o -q -v -h --output --smoke --no-redact --python --cuda-lib --root --timeout --user --nvml-lib --color --quiet --verbose --config --no-config --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --output)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                -o)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cuda-lib)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --root)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nvml-lib)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__check)
            opts="-q -v -h --format --json --fail-on --only --skip --root --timeout --from --user --nvml-lib --python --python-import --cuda-lib --matmul-size --mem-fraction --transfer-size --nccl --nccl-lib --image --no-smoke --quick --preflight --since --since-boot --output --baseline --fix-script --expect-gpus --color --quiet --verbose --config --no-config --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "human json markdown junit prometheus html" -- "${cur}"))
                    return 0
                    ;;
                --fail-on)
                    COMPREPLY=($(compgen -W "error warning never" -- "${cur}"))
                    return 0
                    ;;
                --only)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --skip)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nvml-lib)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cuda-lib)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --matmul-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mem-fraction)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --transfer-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nccl-lib)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --image)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --preflight)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --since)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --baseline)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --expect-gpus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__completions)
            opts="-q -v -h --color --quiet --verbose --config --no-config --help bash elvish fish powershell zsh"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__config)
            opts="-q -v -h --format --json --color --quiet --verbose --config --no-config --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "human json" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__devices)
            opts="-q -v -h --detail --wide --topo --format --json --fail-on --only --skip --root --timeout --from --user --nvml-lib --color --quiet --verbose --config --no-config --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "human json markdown html" -- "${cur}"))
                    return 0
                    ;;
                --fail-on)
                    COMPREPLY=($(compgen -W "error warning never" -- "${cur}"))
                    return 0
                    ;;
                --only)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --skip)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nvml-lib)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__diff)
            opts="-q -v -h --format --json --fail-on --color --quiet --verbose --config --no-config --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "human json markdown html" -- "${cur}"))
                    return 0
                    ;;
                --fail-on)
                    COMPREPLY=($(compgen -W "error warning never" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__explain)
            opts="-q -v -h --list --format --json --color --quiet --verbose --config --no-config --help GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "human json markdown html" -- "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__fleet)
            opts="-q -v -h --format --json --fail-on --only --skip --expect-gpus --color --quiet --verbose --config --no-config --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "human json markdown html" -- "${cur}"))
                    return 0
                    ;;
                --fail-on)
                    COMPREPLY=($(compgen -W "error warning never" -- "${cur}"))
                    return 0
                    ;;
                --only)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --skip)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --expect-gpus)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help)
            opts="check toolkit libs devices smoke recommend fleet diff explain config schema bundle mcp completions man help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__bundle)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__check)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__completions)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__config)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__devices)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__diff)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__explain)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__fleet)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__libs)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__man)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__mcp)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__recommend)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__schema)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__smoke)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__help__subcmd__toolkit)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__libs)
            opts="-q -v -h --all --python --format --json --fail-on --only --skip --root --timeout --from --color --quiet --verbose --config --no-config --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "human json markdown html" -- "${cur}"))
                    return 0
                    ;;
                --fail-on)
                    COMPREPLY=($(compgen -W "error warning never" -- "${cur}"))
                    return 0
                    ;;
                --only)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --skip)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__man)
            opts="-q -v -h --color --quiet --verbose --config --no-config --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__mcp)
            opts="-q -v -h --color --quiet --verbose --config --no-config --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__recommend)
            opts="-q -v -h --driver --gpu --python --platform --installer --cuda --fresh --format --json --root --timeout --from --nvml-lib --color --quiet --verbose --config --no-config --help torch torchvision torchaudio jax tensorflow onnxruntime-gpu vllm flash-attn xformers bitsandbytes pytorch flash_attn onnxruntime tf"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --driver)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gpu)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --python)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --platform)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --installer)
                    COMPREPLY=($(compgen -W "pip uv conda poetry pdm" -- "${cur}"))
                    return 0
                    ;;
                --cuda)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "human json markdown html" -- "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --nvml-lib)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__schema)
            opts="-q -v -h --color --quiet --verbose --config --no-config --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__smoke)
            opts="-q -v -h --device --format --json --fail-on --only --skip --root --timeout --nvml-lib --cuda-lib --matmul-size --mem-fraction --transfer-size --nccl --nccl-lib --color --quiet --verbose --config --no-config --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --device)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "human json markdown html" -- "${cur}"))
                    return 0
                    ;;
                --fail-on)
                    COMPREPLY=($(compgen -W "error warning never" -- "${cur}"))
                    return 0
                    ;;
                --only)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --skip)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nvml-lib)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --cuda-lib)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --matmul-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mem-fraction)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --transfer-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --nccl-lib)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        gpudoctor__subcmd__toolkit)
            opts="-q -v -h --format --json --fail-on --only --skip --root --timeout --from --color --quiet --verbose --config --no-config --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --format)
                    COMPREPLY=($(compgen -W "human json markdown html" -- "${cur}"))
                    return 0
                    ;;
                --fail-on)
                    COMPREPLY=($(compgen -W "error warning never" -- "${cur}"))
                    return 0
                    ;;
                --only)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --skip)
                    COMPREPLY=($(compgen -W "identity platform kernel_module kernel_log pci topology device_nodes container_host environment nccl toolkits libraries linkage nvml pytorch pytorch_live smoke GD001 GD002 GD003 GD004 GD005 GD006 GD007 GD008 GD009 GD010 GD011 GD012 GD013 GD014 GD015 GD016 GD017 GD018 GD019 GD020 GD021 GD022 GD023 GD024 GD025 GD026 GD027 GD028 GD029 GD030 GD031 GD032 GD033 GD034 GD035 GD036 GD037 GD038 GD039 GD040 GD041 GD042 GD043 GD044 GD045 GD046 GD047 GD048 GD049 GD050 GD051 GD052 GD053 GD054 GD055 GD056 GD057 GD058 GD059 GD060 GD061 GD062 GD063 GD064 GD065 GD066 GD067 GD068 GD069 GD070 GD071 GD072 GD073 GD074 GD075 GD076 GD077 GD078 GD079 GD080 GD081 GD082 GD083 GD084 GD085 GD086 GD087 GD088 GD089 GD090 GD091" -- "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=()
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o plusdirs
                    fi
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                --color)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --config)
                    local oldifs
                    if [ -n "${IFS+x}" ]; then
                        oldifs="$IFS"
                    fi
                    IFS=$'\n'
                    COMPREPLY=($(compgen -f "${cur}"))
                    if [ -n "${oldifs+x}" ]; then
                        IFS="$oldifs"
                    fi
                    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
                        compopt -o filenames
                    fi
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _gpudoctor -o nosort -o bashdefault -o default gpudoctor
else
    complete -F _gpudoctor -o bashdefault -o default gpudoctor
fi

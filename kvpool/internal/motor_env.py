"""What each Motor role's processes find in their environment, written as container env and as shell functions: the
names motor-kvpool sets itself and the shell words (shell_exports). Which values each role gets, from env.json's
sections and the store contract, is kvpool/program/role_env.py's.

The same values reach a pod twice, as in deploy.py plus what Kubernetes shows: as container env (visible to
`kubectl describe` and read by the policy pack) and as the `set_*_env` functions deploy.py writes into Motor's
scripts, which re-export them at deploy.py's points (the engine side's after `set_cann_env` and after Motor
regenerates the Mooncake client file), so every value wins where it wins under deploy.py.
"""

from __future__ import annotations

from typing import Any, Collection, Iterator, Mapping, Sequence

from kvpool.policies import rules

# Names every Motor pod's container env defines before any env.json entry (motor_pod.FIELD_ENV and motor_pod.motor_env,
# which env.json may not set: motor_pod.check_internal_env). Motor's scripts leave them alone before a set_*_env
# function runs, but for JOB_NAME in an engine: engine.sh appends the instance's indexes first (roles/engine.sh:43).
POD_ENV_NAMES = (
    "POD_IP", "HOST_IP", "ROLE", "JOB_NAME", "CONFIGMAP_PATH", "CONFIG_PATH",
    "CONTROLLER_SERVICE", "COORDINATOR_SERVICE", "COORDINATOR_INFER_SERVICE", "COORDINATOR_OBS_SERVICE",
)
# What motor_derived_env (kvpool/program/role_env.py) adds to the functions: no container env holds them, so their
# values are exported as written.
DERIVED_ENV_NAMES = ("ENGINE_TYPE", "MODEL_NAME", "SERVICE_ID")
# Every name motor-kvpool sets for Motor's processes, the one list env.json's sections (motor_pod.check_internal_env)
# and secret_env (settings/from_stack.py) are refused from; the control plane's pods also get POD_NAMESPACE.
MOTOR_INTERNAL_ENV = (*POD_ENV_NAMES, *DERIVED_ENV_NAMES)
CONTROL_PLANE_INTERNAL_ENV = (*MOTOR_INTERNAL_ENV, "POD_NAMESPACE")
# What else the kubelet defines in Motor containers, which shell_exports writes a reference to as the text `$(NAME)`
# while the container env holds the value (so Motor's processes would see the text): the control plane's own
# POD_NAMESPACE, secret_env's names (envFrom), and the API server Service's variables (KUBERNETES_SERVICE_HOST,
# KUBERNETES_PORT_443_TCP, ...), which every container gets whatever enableServiceLinks says. The settings refuse a
# reference to one (unfollowed_references).
CONTROL_PLANE_ONLY_ENV = tuple(name for name in CONTROL_PLANE_INTERNAL_ENV if name not in MOTOR_INTERNAL_ENV)
API_SERVICE_ENV_PREFIXES = ("KUBERNETES_SERVICE_", "KUBERNETES_PORT")
# env.json's sections with a set_*_env function a deployed pod runs (no pod runs kv_cache_store.sh's), and those of
# them whose function runs in the controller's or the coordinator's pod.
FUNCTION_SECTIONS = (
    "motor_common_env", "motor_controller_env", "motor_coordinator_env", "motor_engine_prefill_env",
    "motor_engine_decode_env", "motor_kv_conductor_env",
)
CONTROL_PLANE_SECTIONS = ("motor_common_env", "motor_controller_env", "motor_coordinator_env")


def env_text(value: Any) -> str:
    """A config value as env text: JSON's true/false, everything else as written."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)


def kubernetes_pieces(text: str) -> list[tuple[str, bool]]:
    """The kubelet's expansion of a container env value (third_party/forked/golang/expansion Expand) as pieces:
    (text, False) is literal, (NAME, True) a reference `$(NAME)` to be looked up. `$$` is a literal `$`; a `$` before
    any other character, or last, stays; `$(` without a closing `)` stays; a name runs to the first `)`."""
    pieces: list[tuple[str, bool]] = []
    literal, cursor = [], 0
    while cursor < len(text):
        char = text[cursor]
        if char != "$" or cursor + 1 == len(text):
            literal.append(char)
            cursor += 1
        elif text[cursor + 1] == "$":
            literal.append("$")
            cursor += 2
        elif text[cursor + 1] == "(" and (closer := text.find(")", cursor + 2)) != -1:
            pieces.append(("".join(literal), False))
            pieces.append((text[cursor + 2:closer], True))
            literal, cursor = [], closer + 1
        else:  # `$x` or an unclosed `$(`: both characters stay, as Expand copies them
            literal.append(text[cursor:cursor + 2])
            cursor += 2
    pieces.append(("".join(literal), False))
    return [piece for piece in pieces if piece[1] or piece[0]]


def single_quoted(text: str) -> str:
    """`text` as one bash word that is exactly `text`: nothing inside single quotes is special but `'` itself."""
    return "'" + text.replace("'", "'\\''") + "'"


def shell_exports(env: Mapping[str, Any], container: Sequence[str] | None = None) -> str:
    """The body of a set_*_env function: one `export NAME=WORD` a line, in `env`'s order.

    The contract: each variable the function exports equals, byte for byte, what Kubernetes sets it to in the Motor
    container that runs the function, whose env lists Motor's own entries (POD_ENV_NAMES) and then `container`, the
    names of its other entries in order (default: `env`'s own, as in the controller and the engines; the coordinator
    and the KV conductor list store entries too); the same values reach the pod as that container env. So each value
    is expanded as the kubelet expands it (kubernetes_pieces): a reference `$(NAME)` to a name the container defines
    before it becomes `"${NAME}"`, which the shell reads from the pod or from an earlier export of the function;
    `$$` becomes `$`; everything else, an undefined `$(...)` included, is literal text, single-quoted. Nothing in a
    value runs, expands or splits. A `$` is never live: `/opt/lib:$LD_LIBRARY_PATH` stays those characters (write
    `$(NAME)` for a variable Kubernetes defines). DERIVED_ENV_NAMES are exported as written and define nothing: no
    container env holds them. Where the shell's value of a referenced name is not the container's, the function's is
    not either: `${JOB_NAME}` in an engine's function (see POD_ENV_NAMES). Names only some of a function's pods
    define (the control plane's POD_NAMESPACE, secret_env's names from envFrom) and the API server Service's
    variables are no references here: `$(NAME)` of one stays literal in the function while Kubernetes expands it, so
    the settings refuse such a reference (unfollowed_references). Other Services' link variables (enableServiceLinks)
    are not known here: a reference to one is literal in the function too."""
    order = list(container) if container is not None else [name for name in env if name not in DERIVED_ENV_NAMES]
    position = {name: index for index, name in enumerate(order)}
    lines = []
    for name, value in env.items():
        text = env_text(value)
        derived = name in DERIVED_ENV_NAMES
        defined = set(POD_ENV_NAMES) if derived else {*POD_ENV_NAMES, *order[:position[name]]}
        pieces = [(text, False)] if derived else kubernetes_pieces(text)
        word = "".join(
            f'"${{{piece}}}"' if reference and piece in defined
            else single_quoted(f"$({piece})" if reference else piece)
            for piece, reference in pieces
        ) or "''"
        lines.append(f"    export {name}={word}\n")
    return "".join(lines) or "    :\n"  # `:` keeps an empty function valid bash


def unfollowed_references(
    sections: Mapping[str, Mapping[str, Any]], secret_names: Collection[str] = ()
) -> Iterator[tuple[str, str, str]]:
    """(section, variable, name) of each `$(name)` in an env.json value that the kubelet resolves in a container
    running the section's function and the function cannot (CONTROL_PLANE_ONLY_ENV where the function runs in a
    control-plane pod, `secret_names` where it runs in a pod loading the Secret: rules.SECRET_ENV_SECTIONS, and
    API_SERVICE_ENV_PREFIXES' names everywhere) and that no variable of the function's env sets before it; the first
    such name of each variable."""
    common = sections.get("motor_common_env") or {}
    for section in FUNCTION_SECTIONS:
        own = sections.get(section) or {}
        kubelet = {*(CONTROL_PLANE_ONLY_ENV if section in CONTROL_PLANE_SECTIONS else ()),
                   *(secret_names if section in rules.SECRET_ENV_SECTIONS else ())}
        before: set[str] = set()
        for variable, value in {**common, **own}.items():  # the function's env, in its order (role_env.script_envs)
            unfollowed = [name for name, reference in kubernetes_pieces(env_text(value)) if reference
                          and name not in before and (name in kubelet or name.startswith(API_SERVICE_ENV_PREFIXES))]
            if unfollowed and variable in own:
                yield section, variable, unfollowed[0]
            before.add(variable)


def unfollowed_message(name: str, namespace: str, secret_names: Collection[str] = ()) -> str:
    """What the settings say of a value referencing `$(name)` (unfollowed_references), with the fix."""
    if name in secret_names:
        what, fix = "a name of secret_env, which Kubernetes fills in from the Secret", (
            "put the whole value in secret_env instead, under this variable's name")
    elif name in CONTROL_PLANE_ONLY_ENV:
        what, fix = ("the pod's namespace, which Kubernetes fills in in the controller's and the coordinator's "
                     "containers"), f"write the namespace itself: {namespace}"
    else:
        what, fix = ("a variable of the API server's Service, which the kubelet defines in every container",
                     "write the API server's address itself (kubernetes.default.svc)")
    return (f"references $({name}), {what}, while Motor's set_*_env functions re-export the text `$({name})`, so "
            f"Motor's processes would see that text; {fix}.")

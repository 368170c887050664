# Sourced by bench/real/frameworks_*_real.sh on a GPU host that has torch but
# no package index: installs the frameworks of tools/requirements-frameworks.txt
# from wheels downloaded beforehand into build-wheels/ (pip download --no-deps
# --python-version of the host's Python, one per name below) into $site, once,
# and puts it on PYTHONPATH. Sets py (torch's python), site; defines run.
root=${root:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
py=${PY:-/opt/torch/.venv/bin/python3}
site=${FRAMEWORKS_SITE:-/tmp/frameworks-site}
if [[ ! -e $site/.installed ]]; then
  mkdir -p "$site"
  pip=("$py" -m pip install -q --no-index --find-links "$root/build-wheels" --no-deps --target "$site")
  req() { grep -iE "^$1==" "$root/tools/requirements-frameworks.txt"; }
  "${pip[@]}" wheel==0.48.0 setuptools==80.9.0
  names="transformers accelerate tokenizers safetensors huggingface_hub hf-xet regex PyYAML tqdm psutil msgpack ninja
         hjson py-cpuinfo pydantic pydantic_core annotated-types typing-inspection einops typer click rich shellingham
         markdown-it-py mdurl Pygments httpx2 httpcore2 h11 anyio certifi idna packaging annotated-doc truststore
         torchtitan torchdata datasets dill multiprocess tomli tyro docstring_parser typeguard megatron-core fsspec"
  "${pip[@]}" $(for n in $names; do req "$n"; done) 2>&1 | tail -3
  PYTHONPATH=$site DS_BUILD_OPS=0 "${pip[@]}" --no-build-isolation "$(req deepspeed)" 2>&1 | tail -3
  touch "$site/.installed"
fi
export PYTHONPATH=$site HF_HUB_OFFLINE=1
# run NAME COMMAND...: COMMAND (240 s at most) with its output in $out/NAME.log, which begins with the command
# line and ends with its exit status; prints the log's last three lines that match $summary (a regex).
run() {
  local log=$out/$1.log
  shift
  echo "# $*" >"$log"
  timeout 240 "$@" >>"$log" 2>&1
  echo "# exit $?" >>"$log"
  grep -hE "$summary" "$log" | tail -3
  return 0
}

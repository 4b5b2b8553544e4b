#!/usr/bin/env bash
# Offline checks of terraform/: `terraform fmt -check`, then for every module and the example `init` against
# the machine's local provider mirror, `validate` and `terraform test` (mock_provider "aws"; nothing is
# applied for real), plus shellcheck of the rendered node user data (golden file) when shellcheck exists.
# Everything runs on a copy in a temporary directory: no .terraform/ or lock file is left in the tree.
#
#   terraform/check.sh                   run the checks
#   terraform/check.sh --update-golden   first re-render modules/node-user-data/tests/golden/user-data.sh
#
# Environment: TF_PLUGIN_DIR (provider mirror root; default: /opt/tf-plugins, else found on disk),
# TF_CHECK_JOBS (configurations checked in parallel; default 3).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
configs=(modules/node-user-data modules/network modules/redis modules/gateway modules/gpu-fleet examples/complete)
jobs=${TF_CHECK_JOBS:-3}
update_golden=false

for arg in "$@"; do
  case "$arg" in
    --update-golden) update_golden=true ;;
    -h | --help)
      sed -n '2,12p' "$0"
      exit 0
      ;;
    *)
      echo "check.sh: unknown argument '$arg'" >&2
      exit 2
      ;;
  esac
done

if ! command -v terraform >/dev/null 2>&1; then
  echo "check.sh: terraform is not on the PATH" >&2
  exit 127
fi

find_plugin_dir() {
  if [[ -n "${TF_PLUGIN_DIR:-}" ]]; then
    printf '%s\n' "$TF_PLUGIN_DIR"
    return
  fi
  if [[ -d /opt/tf-plugins/registry.terraform.io/hashicorp/aws ]]; then
    printf '%s\n' /opt/tf-plugins
    return
  fi
  local binary
  binary=$(find / \( -path /proc -o -path /sys \) -prune -o -name 'terraform-provider-aws_*' -type f -print -quit 2>/dev/null || true)
  if [[ -z "$binary" || "$binary" != */registry.terraform.io/* ]]; then
    echo "check.sh: no local mirror of hashicorp/aws found; set TF_PLUGIN_DIR" >&2
    return 1
  fi
  printf '%s\n' "${binary%%/registry.terraform.io/*}"
}
plugin_dir=$(find_plugin_dir)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessera-terraform.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tf" "$tmp/data" "$tmp/logs" "$tmp/rc"

# Offline and reproducible: no user CLI config (mirrors, credentials helpers), no version check-in.
: >"$tmp/terraformrc"
export TF_CLI_CONFIG_FILE="$tmp/terraformrc" CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 TF_INPUT=0

copy_tree() {
  tar -C "$here" --exclude=.terraform --exclude=.terraform.lock.hcl --exclude='*.tfstate*' -cf - modules examples | tar -C "$1" -xf -
}

if [[ "$update_golden" == true ]]; then
  golden_dir="$tmp/golden"
  mkdir -p "$golden_dir"
  copy_tree "$golden_dir"
  (
    cd "$golden_dir/modules/node-user-data"
    TF_DATA_DIR="$tmp/data/golden" terraform init -backend=false -no-color >/dev/null
    TF_DATA_DIR="$tmp/data/golden" terraform apply -auto-approve -no-color -var-file=tests/golden/golden.tfvars >/dev/null
    TF_DATA_DIR="$tmp/data/golden" terraform output -raw user_data >"$here/modules/node-user-data/tests/golden/user-data.sh"
  )
  echo "updated modules/node-user-data/tests/golden/user-data.sh"
fi

echo "== terraform fmt -check"
terraform fmt -check -recursive -diff "$here"

if command -v shellcheck >/dev/null 2>&1; then
  echo "== shellcheck of the rendered node user data"
  golden="$here/modules/node-user-data/tests/golden/user-data.sh"
  shellcheck -s bash "$golden"
  for script in /usr/local/lib/tessera/imds.sh /usr/local/bin/tessera-prepare /usr/local/bin/tessera-lifecycle; do
    # The scripts that user data writes with heredocs: shellcheck sees none of them inside the heredoc.
    sed -n "\\#^cat >${script} <<'TESSERA_EOF'\$#,/^TESSERA_EOF\$/p" "$golden" | sed '1d;$d' >"$tmp/extracted.sh"
    if [[ ! -s "$tmp/extracted.sh" ]]; then
      echo "check.sh: $script not found in $golden" >&2
      exit 1
    fi
    shellcheck -s bash "$tmp/extracted.sh"
  done
else
  echo "== shellcheck not found: rendered scripts not linted"
fi

copy_tree "$tmp/tf"

check_config() {
  local config=$1 key=${1//\//_}
  local data="$tmp/data/$key" start=$SECONDS rc=0
  (
    cd "$tmp/tf/$config" &&
      TF_DATA_DIR="$data" terraform init -backend=false -plugin-dir="$plugin_dir" -no-color &&
      TF_DATA_DIR="$data" terraform validate -no-color &&
      TF_DATA_DIR="$data" terraform test -no-color
  ) >"$tmp/logs/$key.log" 2>&1 || rc=$?
  echo "$rc" >"$tmp/rc/$key"
  echo $((SECONDS - start)) >"$tmp/rc/$key.secs"
}

echo "== init, validate, test: ${configs[*]} (${jobs} at a time)"
running=0
for config in "${configs[@]}"; do
  check_config "$config" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait

failed=0
for config in "${configs[@]}"; do
  key=${config//\//_}
  rc=$(cat "$tmp/rc/$key" 2>/dev/null || echo 1)
  secs=$(cat "$tmp/rc/$key.secs" 2>/dev/null || echo '?')
  summary=$(grep -E '^(Success|Failure)!' "$tmp/logs/$key.log" | tail -n 1 || true)
  if [[ "$rc" == 0 ]]; then
    echo "ok   $config (${secs}s): ${summary:-validated}"
  else
    failed=$((failed + 1))
    echo "FAIL $config (exit $rc, ${secs}s); log follows"
    sed 's/^/    /' "$tmp/logs/$key.log"
  fi
done

if ((failed > 0)); then
  echo "check.sh: $failed of ${#configs[@]} configurations failed" >&2
  exit 1
fi
echo "check.sh: all ${#configs[@]} configurations passed"

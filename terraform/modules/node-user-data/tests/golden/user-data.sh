#!/bin/bash
# Tessera GPU node bootstrap, rendered by terraform/modules/node-user-data (edit the templates there).
# Runs once per instance (cloud-init); what it installs runs at every boot, warm-pool restarts included.
# The image provides: NVIDIA driver, Node.js, Tessera in /opt/tessera (dependencies installed), the AWS CLI,
# and optionally the CloudWatch agent (publishes the queue-time metric that drives scaling).
set -euo pipefail

id tessera >/dev/null 2>&1 || useradd --system --home-dir /var/lib/tessera --shell /usr/sbin/nologin tessera
install -d -m 0755 /usr/local/lib/tessera /var/lib/tessera

cat >/usr/local/lib/tessera/imds.sh <<'TESSERA_EOF'
# Instance metadata over IMDSv2 (the launch template refuses v1): a fresh session token per call.
imds() {
  local token
  token=$(curl -fsS -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' http://169.254.169.254/latest/api/token) || return 1
  curl -fsS -H "X-aws-ec2-metadata-token: $token" "http://169.254.169.254/latest/meta-data/$1"
}
TESSERA_EOF

cat >/usr/local/bin/tessera-prepare <<'TESSERA_EOF'
#!/bin/bash
# Runs as root before every start of tessera-node: secrets and identity into /run/tessera/node.env
# (tmpfs, group tessera, mode 0640), then the model repository onto local disk.
set -euo pipefail
# shellcheck source=/dev/null
. /usr/local/lib/tessera/imds.sh

region=$(imds placement/region)
instance_id=$(imds instance-id)
private_ip=$(imds local-ipv4)
redis_url=$(aws secretsmanager get-secret-value --region "$region" --secret-id 'arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera-golden/redis-url-AbCdEf' --query SecretString --output text)
node_admin_key=$(aws secretsmanager get-secret-value --region "$region" --secret-id 'arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera-golden/node-admin-key-AbCdEf' --query SecretString --output text)

install -d -m 0750 -o root -g tessera /run/tessera
(
  umask 0027
  printf 'REDIS_URL=%s\nTESSERA_NODE_ID=%s\nTESSERA_ADVERTISE_HOST=%s\nTESSERA_NODE_ADMIN_KEY=%s\n' "$redis_url" "$instance_id" "$private_ip" "$node_admin_key" >/run/tessera/node.env.tmp
)
chgrp tessera /run/tessera/node.env.tmp
mv /run/tessera/node.env.tmp /run/tessera/node.env

# Model repository: S3 -> local disk, readable by the tessera user (only changed objects move on a warm start).
install -d -m 0755 '/var/lib/tessera/models'
aws s3 sync --region "$region" --delete --only-show-errors 's3://tessera-models-example/prod/repository' '/var/lib/tessera/models'
TESSERA_EOF

cat >/usr/local/bin/tessera-lifecycle <<'TESSERA_EOF'
#!/bin/bash
# Ties tessera-node to the Auto Scaling lifecycle; started at every boot by tessera-lifecycle.service.
#  - Entering the warm pool (target state Warmed:*): prepare (download models), complete the launch hook,
#    never serve; the group then stops the instance.
#  - Going in service: start tessera-node, complete the launch hook once /v2/health/ready answers 200
#    (ABANDON after 900 s, and the group replaces the instance).
#  - Leaving (target state Terminated or Warmed:*, or a Spot interruption notice): `systemctl stop
#    tessera-node` sends SIGTERM and waits while the node drains (gateways are told, in-flight work
#    finishes), then complete the termination hook so the group goes on.
set -uo pipefail
# shellcheck source=/dev/null
. /usr/local/lib/tessera/imds.sh

region=$(imds placement/region)
instance_id=$(imds instance-id)
group=$(imds tags/instance/aws:autoscaling:groupName)

complete_hook() {
  aws autoscaling complete-lifecycle-action --region "$region" --auto-scaling-group-name "$group" \
    --instance-id "$instance_id" --lifecycle-hook-name "$1" --lifecycle-action-result "$2" \
    || echo "tessera-lifecycle: no pending $1 action to complete (normal after a reboot)" >&2
}

target=$(imds autoscaling/target-lifecycle-state || echo InService)
case "$target" in
  Warmed:*)
    systemctl start tessera-prepare.service
    complete_hook 'tessera-golden-ready' CONTINUE
    exit 0
    ;;
esac

systemctl start tessera-node.service
deadline=$((SECONDS + 900))
until curl -fsS -o /dev/null http://127.0.0.1:8000/v2/health/ready; do
  if ((SECONDS >= deadline)); then
    echo "tessera-lifecycle: not ready after 900 s; abandoning the launch" >&2
    complete_hook 'tessera-golden-ready' ABANDON
    exit 1
  fi
  sleep 5
done
complete_hook 'tessera-golden-ready' CONTINUE

while true; do
  target=$(imds autoscaling/target-lifecycle-state || echo InService)
  if [[ "$target" == Terminated || "$target" == Warmed:* ]]; then
    echo "tessera-lifecycle: target state $target; draining" >&2
    systemctl stop tessera-node.service
    complete_hook 'tessera-golden-drain' CONTINUE
    exit 0
  fi
  if imds spot/instance-action >/dev/null 2>&1; then
    echo "tessera-lifecycle: Spot interruption notice; draining" >&2
    systemctl stop tessera-node.service
    complete_hook 'tessera-golden-drain' CONTINUE
    exit 0
  fi
  sleep 5
done
TESSERA_EOF
chmod 0755 /usr/local/bin/tessera-prepare /usr/local/bin/tessera-lifecycle

cat >/etc/systemd/system/tessera-prepare.service <<'TESSERA_EOF'
[Unit]
Description=Tessera node preparation (REDIS_URL from Secrets Manager, model repository from S3)
Wants=network-online.target
After=network-online.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/bin/tessera-prepare
TimeoutStartSec=1800
TESSERA_EOF

cat >/etc/systemd/system/tessera-node.service <<'TESSERA_EOF'
[Unit]
Description=Tessera GPU node agent (Triton-compatible inference server)
Requires=tessera-prepare.service
After=tessera-prepare.service network-online.target

[Service]
Type=simple
User=tessera
Group=tessera
WorkingDirectory=/opt/tessera
Environment=NODE_ENV=production
EnvironmentFile=/run/tessera/node.env
ExecStart=/usr/bin/node /opt/tessera/bin/tessera-node.js --model-repository /var/lib/tessera/models --model-control-mode none --http-port 8000 --grpc-port 8001 --metrics-port 8002 --exit-timeout-secs 30 --node-id ${TESSERA_NODE_ID} --advertise-host ${TESSERA_ADVERTISE_HOST} --http-restricted-api=model-repository,logging:tessera-node-admin-key=${TESSERA_NODE_ADMIN_KEY} --grpc-restricted-protocol=model-repository,logging:admin-key=${TESSERA_NODE_ADMIN_KEY}
# Drain: SIGTERM to the node only; it stops taking work, finishes in-flight requests within
# --exit-timeout-secs and exits 0. SIGKILL only if that overruns.
KillMode=mixed
KillSignal=SIGTERM
TimeoutStopSec=60
Restart=on-failure
RestartSec=5
LimitNOFILE=65536
TESSERA_EOF

cat >/etc/systemd/system/tessera-lifecycle.service <<'TESSERA_EOF'
[Unit]
Description=Tessera Auto Scaling lifecycle handler (start when in service, drain before termination)
Wants=network-online.target
After=network-online.target

[Service]
Type=simple
ExecStart=/usr/local/bin/tessera-lifecycle
Restart=on-failure
RestartSec=10

[Install]
WantedBy=multi-user.target
TESSERA_EOF

# Queue time for scaling: the CloudWatch agent scrapes the node's Prometheus endpoint and publishes
# nv_inference_queue_duration_us and nv_inference_request_success (namespace/dimension Fleet=tessera-golden).
cwagent=/opt/aws/amazon-cloudwatch-agent
if [ -x "$cwagent/bin/amazon-cloudwatch-agent-ctl" ]; then
  cat >"$cwagent/etc/tessera-prometheus.yaml" <<'TESSERA_EOF'
global:
  scrape_interval: 15s
  scrape_timeout: 10s
scrape_configs:
  - job_name: tessera-node
    sample_limit: 10000
    static_configs:
      - targets: ["127.0.0.1:8002"]
        labels:
          Fleet: tessera-golden
TESSERA_EOF
  cat >"$cwagent/etc/tessera-cwagent.json" <<'TESSERA_EOF'
{"agent":{"run_as_user":"root"},"logs":{"force_flush_interval":15,"metrics_collected":{"prometheus":{"emf_processor":{"metric_declaration":[{"dimensions":[["Fleet"]],"label_matcher":"^tessera-node$","metric_selectors":["^nv_inference_queue_duration_us$","^nv_inference_request_success$"],"source_labels":["job"]}],"metric_declaration_dedup":true,"metric_namespace":"Tessera","metric_unit":{"nv_inference_queue_duration_us":"Microseconds","nv_inference_request_success":"Count"}},"log_group_name":"/tessera/tessera-golden/prometheus","prometheus_config_path":"/opt/aws/amazon-cloudwatch-agent/etc/tessera-prometheus.yaml"}}}}
TESSERA_EOF
  "$cwagent/bin/amazon-cloudwatch-agent-ctl" -a fetch-config -m ec2 -s -c "file:$cwagent/etc/tessera-cwagent.json"
else
  echo "tessera: amazon-cloudwatch-agent is not on this image; queue-time scaling gets no data" >&2
fi

systemctl daemon-reload
systemctl enable tessera-lifecycle.service
systemctl start --no-block tessera-lifecycle.service

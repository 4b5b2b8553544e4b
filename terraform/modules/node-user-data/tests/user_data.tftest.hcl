# The rendered user data: a golden file for the whole script, plus targeted assertions. No provider needed.
# After an intended template change, regenerate the golden file with `terraform/check.sh --update-golden`.

variables {
  fleet_name                = "tessera-golden"
  model_repository_url      = "s3://tessera-models-example/prod/repository"
  redis_url_secret_arn      = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera-golden/redis-url-AbCdEf"
  node_admin_key_secret_arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera-golden/node-admin-key-AbCdEf"
  launch_hook_name          = "tessera-golden-ready"
  termination_hook_name     = "tessera-golden-drain"
}

run "golden_user_data" {
  command = plan

  assert {
    condition     = output.user_data == file("${path.module}/tests/golden/user-data.sh")
    error_message = "The rendered user data differs from tests/golden/user-data.sh; if the change is intended, run terraform/check.sh --update-golden and review the diff."
  }
}

run "unit_runs_tessera_node_with_repository_and_redis" {
  command = plan

  assert {
    condition     = strcontains(output.node_unit, "ExecStart=/usr/bin/node /opt/tessera/bin/tessera-node.js --model-repository /var/lib/tessera/models --model-control-mode none --http-port 8000 --grpc-port 8001 --metrics-port 8002 --exit-timeout-secs 30 --node-id $${TESSERA_NODE_ID} --advertise-host $${TESSERA_ADVERTISE_HOST} --http-restricted-api=model-repository,logging:tessera-node-admin-key=$${TESSERA_NODE_ADMIN_KEY} --grpc-restricted-protocol=model-repository,logging:admin-key=$${TESSERA_NODE_ADMIN_KEY}\n")
    error_message = "tessera-node must start with the synced repository, Triton's ports and the instance identity."
  }

  assert {
    condition     = strcontains(output.node_unit, "EnvironmentFile=/run/tessera/node.env") && strcontains(output.user_data, "REDIS_URL=%s")
    error_message = "REDIS_URL must reach the unit through the environment file written at start."
  }

  assert {
    condition     = strcontains(output.user_data, "aws s3 sync --region \"$region\" --delete --only-show-errors 's3://tessera-models-example/prod/repository' '/var/lib/tessera/models'")
    error_message = "Sync mode must copy the S3 repository to the local model directory."
  }

  assert {
    condition     = strcontains(output.user_data, "--secret-id 'arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera-golden/node-admin-key-AbCdEf'") && strcontains(output.user_data, "TESSERA_NODE_ADMIN_KEY=%s")
    error_message = "The node admin key (restricted repository and logging APIs) must come from Secrets Manager into the environment file."
  }

  assert {
    condition     = !strcontains(output.user_data, "rediss://") && strcontains(output.user_data, "secretsmanager get-secret-value")
    error_message = "The Redis URL (with its auth token) must come from Secrets Manager, never be written into user data."
  }

  assert {
    condition     = strcontains(output.node_unit, "KillSignal=SIGTERM") && strcontains(output.node_unit, "KillMode=mixed") && strcontains(output.node_unit, "TimeoutStopSec=60")
    error_message = "Stopping the unit must SIGTERM the node and give it --exit-timeout-secs plus a margin."
  }

  assert {
    condition = (
      strcontains(output.user_data, "--lifecycle-hook-name \"$1\" --lifecycle-action-result \"$2\"") &&
      strcontains(output.user_data, "complete_hook 'tessera-golden-drain' CONTINUE") &&
      strcontains(output.user_data, "complete_hook 'tessera-golden-ready' CONTINUE") &&
      strcontains(output.user_data, "autoscaling/target-lifecycle-state")
    )
    error_message = "The lifecycle handler must drain on Terminated and complete both hooks."
  }

  assert {
    condition     = length(output.user_data) < 12000
    error_message = "User data must stay well under EC2's 16 KiB limit (base64 adds a third)."
  }
}

run "direct_mode_passes_the_url_through" {
  command = plan

  variables {
    model_repository_mode = "direct"
    model_control_mode    = "poll"
    exit_timeout_secs     = 120
    extra_node_args       = ["--rate-limit", "execution_count"]
  }

  assert {
    condition     = output.model_repository_arg == "s3://tessera-models-example/prod/repository" && !output.syncs_from_s3
    error_message = "Direct mode must hand the s3:// URL to --model-repository."
  }

  assert {
    condition     = !strcontains(output.user_data, "aws s3 sync")
    error_message = "Direct mode must not sync."
  }

  assert {
    condition     = strcontains(output.node_unit, "--model-control-mode poll") && strcontains(output.node_unit, "--exit-timeout-secs 120") && strcontains(output.node_unit, "TimeoutStopSec=150") && strcontains(output.node_unit, "--rate-limit execution_count")
    error_message = "Flags must follow the variables."
  }
}

run "queue_time_metric_is_published" {
  command = plan

  assert {
    condition = (
      jsondecode(output.cloudwatch_agent_config).logs.metrics_collected.prometheus.emf_processor.metric_namespace == "Tessera" &&
      contains(jsondecode(output.cloudwatch_agent_config).logs.metrics_collected.prometheus.emf_processor.metric_declaration[0].metric_selectors, "^nv_inference_queue_duration_us$") &&
      strcontains(output.user_data, "Fleet: tessera-golden") && strcontains(output.user_data, "127.0.0.1:8002")
    )
    error_message = "The CloudWatch agent must scrape the node's metrics port and publish nv_inference_queue_duration_us by Fleet."
  }
}

run "rejects_bad_repository_url" {
  command = plan

  variables {
    model_repository_url = "https://example.com/models"
  }

  expect_failures = [var.model_repository_url]
}

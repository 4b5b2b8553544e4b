locals {
  sync = var.model_repository_mode == "sync" && startswith(var.model_repository_url, "s3://")

  # What --model-repository gets: the local copy when syncing, else the URL (or path) as given.
  repository_arg = local.sync ? var.local_model_dir : var.model_repository_url

  stop_timeout_secs = var.exit_timeout_secs + 30

  node_args = concat([
    "--model-repository", local.repository_arg,
    "--model-control-mode", var.model_control_mode,
    "--http-port", tostring(var.ports.http),
    "--grpc-port", tostring(var.ports.grpc),
    "--metrics-port", tostring(var.ports.metrics),
    "--exit-timeout-secs", tostring(var.exit_timeout_secs),
    "--node-id", "$${TESSERA_NODE_ID}",
    "--advertise-host", "$${TESSERA_ADVERTISE_HOST}",
    # Load/unload and logging only with the node admin key (issue 14): HTTP header, gRPC metadata.
    "--http-restricted-api=model-repository,logging:tessera-node-admin-key=$${TESSERA_NODE_ADMIN_KEY}",
    "--grpc-restricted-protocol=model-repository,logging:admin-key=$${TESSERA_NODE_ADMIN_KEY}",
  ], var.extra_node_args)

  imds_sh = file("${path.module}/templates/imds.sh")

  prepare_sh = templatefile("${path.module}/templates/tessera-prepare.sh.tftpl", {
    redis_url_secret_arn      = var.redis_url_secret_arn
    node_admin_key_secret_arn = var.node_admin_key_secret_arn
    sync                      = local.sync
    model_repository_url      = var.model_repository_url
    local_model_dir           = var.local_model_dir
  })

  lifecycle_sh = templatefile("${path.module}/templates/tessera-lifecycle.sh.tftpl", {
    http_port              = var.ports.http
    readiness_timeout_secs = var.readiness_timeout_secs
    launch_hook_name       = var.launch_hook_name
    termination_hook_name  = var.termination_hook_name
  })

  prepare_unit = templatefile("${path.module}/templates/tessera-prepare.service.tftpl", {})

  node_unit = templatefile("${path.module}/templates/tessera-node.service.tftpl", {
    install_dir       = var.install_dir
    exec_start        = join(" ", concat([var.node_binary, "${var.install_dir}/bin/tessera-node.js"], local.node_args))
    stop_timeout_secs = local.stop_timeout_secs
  })

  lifecycle_unit = templatefile("${path.module}/templates/tessera-lifecycle.service.tftpl", {})

  prometheus_yaml = templatefile("${path.module}/templates/cwagent-prometheus.yaml.tftpl", {
    fleet_name   = var.fleet_name
    metrics_port = var.ports.metrics
  })

  cwagent_config = jsonencode({
    agent = { run_as_user = "root" }
    logs = {
      force_flush_interval = 15
      metrics_collected = {
        prometheus = {
          log_group_name         = "/tessera/${var.fleet_name}/prometheus"
          prometheus_config_path = "/opt/aws/amazon-cloudwatch-agent/etc/tessera-prometheus.yaml"
          emf_processor = {
            metric_declaration_dedup = true
            metric_namespace         = var.metrics_namespace
            metric_unit = {
              nv_inference_queue_duration_us = "Microseconds"
              nv_inference_request_success   = "Count"
            }
            metric_declaration = [{
              source_labels    = ["job"]
              label_matcher    = "^tessera-node$"
              dimensions       = [["Fleet"]]
              metric_selectors = ["^nv_inference_queue_duration_us$", "^nv_inference_request_success$"]
            }]
          }
        }
      }
    }
  })

  user_data = templatefile("${path.module}/templates/user-data.sh.tftpl", {
    fleet_name      = var.fleet_name
    install_dir     = var.install_dir
    local_model_dir = var.local_model_dir
    imds_sh         = trimsuffix(local.imds_sh, "\n")
    prepare_sh      = trimsuffix(local.prepare_sh, "\n")
    lifecycle_sh    = trimsuffix(local.lifecycle_sh, "\n")
    prepare_unit    = trimsuffix(local.prepare_unit, "\n")
    node_unit       = trimsuffix(local.node_unit, "\n")
    lifecycle_unit  = trimsuffix(local.lifecycle_unit, "\n")
    prometheus_yaml = trimsuffix(local.prometheus_yaml, "\n")
    cwagent_config  = local.cwagent_config
  })
}

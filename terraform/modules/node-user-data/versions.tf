# Pure module: templatefile() only, no provider, so the rendered user data can be tested (and golden-compared)
# anywhere. modules/gpu-fleet feeds its output to the launch template.
terraform {
  required_version = ">= 1.7"
}

# A complete Tessera deployment: network, Redis (TLS + AUTH), the gateway behind HTTPS, and the GPU node fleet.
# See terraform/README.md for the walk-through from `terraform apply` to a first inference.

module "network" {
  source = "../../modules/network"

  name                       = var.name
  vpc_cidr                   = var.vpc_cidr
  availability_zones         = var.availability_zones
  public_ingress_cidr_blocks = var.public_ingress_cidr_blocks
}

module "redis" {
  source = "../../modules/redis"

  name               = var.name
  subnet_ids         = module.network.private_subnet_ids
  security_group_ids = [module.network.security_group_ids.redis]
  auth_token         = var.redis_auth_token
  node_type          = var.redis_node_type
}

module "gateway" {
  source = "../../modules/gateway"

  name                       = var.name
  vpc_id                     = module.network.vpc_id
  public_subnet_ids          = module.network.public_subnet_ids
  private_subnet_ids         = module.network.private_subnet_ids
  alb_security_group_ids     = [module.network.security_group_ids.alb]
  gateway_security_group_ids = [module.network.security_group_ids.gateway]
  certificate_arn            = var.certificate_arn
  ami_id                     = var.gateway_ami_id
  instance_type              = var.gateway_instance_type
  redis_url_secret_arn       = module.redis.redis_url_secret_arn
  admin_key_hash             = var.admin_key_hash
  gateway_config             = var.gateway_config
}

module "gpu_fleet" {
  source = "../../modules/gpu-fleet"

  name                 = var.name
  ami_id               = var.gpu_ami_id
  instance_types       = var.gpu_instance_types
  subnet_ids           = module.network.private_subnet_ids
  security_group_ids   = [module.network.security_group_ids.node]
  model_repository_url = var.model_repository_url
  redis_url_secret_arn = module.redis.redis_url_secret_arn
  on_demand            = var.on_demand
  spot                 = var.spot
  warm_pool            = { enabled = var.warm_pool_size > 0, min_size = var.warm_pool_size }
  queue_time_target_ms = var.queue_time_target_ms
}

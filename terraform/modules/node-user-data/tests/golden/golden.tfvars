# Inputs of the golden user data: the same values as the variables block of tests/user_data.tftest.hcl.
# terraform/check.sh --update-golden renders tests/golden/user-data.sh from these.
fleet_name                = "tessera-golden"
model_repository_url      = "s3://tessera-models-example/prod/repository"
redis_url_secret_arn      = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera-golden/redis-url-AbCdEf"
launch_hook_name          = "tessera-golden-ready"
termination_hook_name     = "tessera-golden-drain"
node_admin_key_secret_arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:tessera-golden/node-admin-key-AbCdEf"

/**
 * The part of an nginx.conf that every bench anchor shares: one worker in the foreground, its pid, logs
 * and temporary files under `dir` (the access log on, as a real proxy runs), and user root where the
 * bench runs as root (nginx refuses to start otherwise). The caller writes the `http` block's rest.
 */
export function nginxConfPreamble(dir: string): string {
  const user = process.getuid?.() === 0 ? 'user root root;\n' : '';
  return `${user}worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
`;
}

#!/bin/sh
# A throwaway certificate authority and the certificates of docker-compose.tls.yml (mutual TLS
# between the Vigil workers, the setup job, the UI and the Temporal server), for trying the TLS
# variant. In production use certificates from your own PKI with the same names and uses:
#
#   ca.pem                     the CA that signed both (the server trusts clients it signed, and
#                              the clients the server)
#   server.pem, server-key.pem the Temporal server: subjectAltName DNS:temporal (the service name
#                              the workers dial) and DNS:localhost; extendedKeyUsage serverAuth and
#                              clientAuth (the server's own roles present it to each other)
#   client.pem, client-key.pem the Vigil workers, the setup job and the UI: extendedKeyUsage clientAuth
#
#   sh deploy/tls/make-dev-certs.sh [DIR]      # default ./secrets/tls; files that exist are kept
set -eu

dir=${1:-./secrets/tls}
days=${VIGIL_DEV_CERT_DAYS:-365}
command -v openssl >/dev/null 2>&1 || { echo "make-dev-certs: openssl is needed" >&2; exit 1; }
umask 077
mkdir -p "$dir"
chmod 700 "$dir"
cd "$dir"

if [ -s ca.pem ] && [ -s server.pem ] && [ -s client.pem ]; then
  echo "make-dev-certs: $dir has ca.pem, server.pem and client.pem, kept"
  exit 0
fi

openssl req -x509 -newkey rsa:3072 -nodes -sha256 -days "$days" -keyout ca-key.pem -out ca.pem \
  -subj "/CN=Vigil compose dev CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

# issue NAME CN EXTENSIONS
issue() {
  openssl req -newkey rsa:3072 -nodes -sha256 -keyout "$1-key.pem" -out "$1.csr" -subj "/CN=$2" 2>/dev/null
  printf '%s\n' "$3" > "$1.ext"
  openssl x509 -req -sha256 -days "$days" -in "$1.csr" -CA ca.pem -CAkey ca-key.pem -CAcreateserial \
    -out "$1.pem" -extfile "$1.ext" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}

issue server temporal "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=DNS:temporal,DNS:localhost,IP:127.0.0.1"
issue client vigil-worker "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"

rm -f ca.srl
# The CA's key signs nothing more: keep it out of the folder the containers read.
mv ca-key.pem ca-key.pem.keep-offline
chmod 644 ca.pem server.pem client.pem server-key.pem client-key.pem
openssl verify -CAfile ca.pem server.pem client.pem
echo "make-dev-certs: wrote ca.pem, server.pem, server-key.pem, client.pem, client-key.pem in $dir"

"""Vendor tokens, recognised by their format: the rule families of gitleaks' default configuration, and of
the rules its contributors propose (newer AI providers, payment providers, Azure's and Windows' credentials).

Each family is written here from the vendor's published token format (a prefix, an alphabet, a length); the
category names the family. Tokens without a recognisable format (a bare 40-character AWS secret, a
vendor's 32-character hex key) are caught by the name they are given instead (`pairs.py`, `keys.py`).
"""

from __future__ import annotations

import re

from rounds_bot.redact.pair_values import credential_shaped
from rounds_bot.redact.rule import Rule, rule, token

_B = r"(?<![A-Za-z0-9])"  # the token starts a word


def _starting(prefix: str) -> str:
    """`prefix` at the start of a word: the literal first, the look behind after it, so the regex engine
    searches for the literal at C speed instead of trying the look-behind at every position."""
    return prefix + r"(?<![A-Za-z0-9]" + prefix + ")"


#: Authress service client access keys: account, region, access key id, secret
#: (any case after the prefix, as gitleaks reads it)
_AUTHRESS = (
    r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}"
    r"\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}"
)


def _mixed(value: str) -> bool:
    """Letters and digits both: a generated token, not a word (HashiCorp Vault's legacy `s.` tokens)."""
    return any(ch.isdigit() for ch in value) and any(ch.isalpha() for ch in value[2:])


def _dense(value: str) -> bool:
    """Base64 of random bytes: upper, lower and digits all present (a word or a hex hash is not)."""
    return (
        any(ch.isupper() for ch in value)
        and any(ch.islower() for ch in value)
        and any(ch.isdigit() for ch in value)
    )


def _generated(value: str) -> bool:
    """Letters and digits both after the prefix: a generated key, not a snake_case name (`test_...`)."""
    tail = value[value.index("_") + 1 :]
    return any(ch.isdigit() for ch in tail) and any(ch.isalpha() for ch in tail)


def _generated_after_colon(value: str) -> bool:
    """What follows the first `:` looks generated (`pair_values.credential_shaped`)."""
    return credential_shaped(value[value.index(":") + 1 :])


#: an AWS access key's id (gitleaks aws-access-token): the prefix of its kind, then 16 base32 characters
_AWS_KEY_ID = r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}"


def _aws_secret(value: str) -> bool:
    """Generated, in both cases: base64 of random bytes, not a hash's hex (a commit's SHA-1 is 40 too)."""
    return credential_shaped(value) and not value.islower() and not value.isupper()


#: the start of a token whose prefix a longer identifier could end with (`unit_test_`, `ctr_`): not after a
#: letter, a digit or an underscore
_W = r"(?<![A-Za-z0-9_])"
#: the end of such a token: no letter, digit or underscore follows it
_E = r"(?![A-Za-z0-9_])"


TOKENS: tuple[Rule, ...] = (
    # whole private-key blocks first: every other rule would only see their header
    rule(
        "private_key",
        r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9_-]{0,40}PRIVATE KEY"
        r"(?: BLOCK)?-----|\Z)",
        "private key",
        flags=re.DOTALL,
    ),
    rule(
        "private_key",
        r"PuTTY-User-Key-File-\d+:.*?(?:Private-MAC: [0-9a-fA-F]+|\Z)",
        "putty-user-key",
        flags=re.DOTALL,
    ),
    # a PEM file base64-encoded whole (a Kubernetes secret's `tls.key`): base64 of `-----BEGIN`
    token("private_key", r"LS0tLS1CRUdJTi[A-Za-z0-9+/=]{20,16000}", "ls0tls1crudjti"),
    # a key's DER (PKCS#1, PKCS#8, SEC 1) in base64 without its PEM lines: a SEQUENCE with a long length
    # (`MII...`) followed by a version INTEGER (`...AgEA...`, `...AgEB...`), on one line or wrapped
    rule(
        "private_key",
        r"(?<![A-Za-z0-9+/])MI[IJ][A-Za-z0-9+/]{60,}(?:\r?\n[A-Za-z0-9+/]{4,200}){0,200}={0,2}",
        "mii",
        accept=lambda m: _dense(m.group(0)[:200]) and ("IBA" in m.group(0)[:20] or "AgE" in m.group(0)[:20]),
    ),
    # a JSON Web Key's private members (RFC 7518 6.2.2, 6.3.2, 6.4.1; RFC 8037 2): in a document with `kty`
    rule(
        "private_key",
        r"""(?:\\?["'])(?:d|p|q|dp|dq|qi|k)(?:\\?["'])[ \t]{0,3}:[ \t]{0,3}\\?["']([A-Za-z0-9_-]{16,2000})""",
        "kty",
        group=1,
    ),
    # AI providers
    token("anthropic_key", r"sk-ant-[A-Za-z0-9_-]{20,300}", "sk-ant-"),
    token(
        "openai_key",
        r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,300}",
        "sk-proj-",
        "sk-svcacct-",
        "sk-admin-",
        "sk-none-",
    ),
    token("openai_key", r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", "t3blbkfj"),
    token("api_token", _starting(r"sk-") + r"[A-Za-z0-9]{32,64}", "sk-"),
    token("api_token", r"dnkey-[a-z0-9=_-]{26}-[a-z0-9=_-]{52}", "dnkey-"),
    token("api_token", r"pplx-[A-Za-z0-9]{40,64}", "pplx-"),
    token("huggingface_token", r"(?:hf|api_org)_[A-Za-z0-9]{30,40}", "hf_", "api_org_"),
    # Figma's personal access tokens (`figd_`, as GitHub's secret scanning names them; not a gitleaks rule)
    token("api_token", _starting("figd_") + r"[A-Za-z0-9_-]{38,50}", "figd_"),
    token("api_token", r"gsk_[A-Za-z0-9]{48}", "gsk_"),  # Groq
    token("api_token", r"xai-[A-Za-z0-9]{80}", "xai-"),  # xAI
    token("api_token", r"sk-or(?:-v\d{1,2})?-[a-f0-9]{64}", "sk-or-"),  # OpenRouter
    token("api_token", _starting("r8_") + r"[A-Za-z0-9]{37,40}", "r8_"),  # Replicate: `r8_` and 37
    token("api_token", r"lsv2_(?:pt|sk)_[a-z0-9]{32}_[a-z0-9]{10}", "lsv2_"),  # LangSmith
    token("api_token", r"pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{50,80}", "pcsk_"),  # Pinecone
    token("api_token", r"salad_cloud_[A-Za-z0-9]{1,7}_[A-Za-z0-9]{7,240}", "salad_cloud_"),  # SaladCloud
    # a Claude Code session's remote-control link
    token("session", r"claude\.ai/code/session_[A-Za-z0-9]{16,200}", "claude.ai/code/session_"),
    # clouds
    # an AWS secret access key (40 characters of base64, docs.aws.amazon.com/IAM/latest/UserGuide/
    # id_credentials_access-keys.html) has no format of its own: beside its key id (`AKIA... / <secret>`,
    # `AKIA...:<secret>`, as `aws iam create-access-key --output text` prints the two side by side; before the
    # key id's rule, which would hide the id), and after its name with only blanks between (a tab-separated
    # dump: `=` and `:` after a name are `pairs.py`'s), a generated run of 40 is the secret
    rule(
        "aws_key",
        _B + _AWS_KEY_ID + r"(?:[ \t]{0,3}[/:,;|][ \t]{0,3}|[ \t]{1,3})([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        *("akia", "asia", "abia", "acca", "a3t"),
        group=1,
        accept=lambda m: _aws_secret(m.group(1)),
    ),
    rule(
        "aws_key",
        r"(?i)(?<![A-Za-z0-9])(?:aws[_.-]?)?secret[_.-]?(?:access[_.-]?)?key[\"']?[ \t]{1,20}"
        r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        "secret",
        group=1,
        accept=lambda m: _aws_secret(m.group(1)),
    ),
    token(
        "aws_key",
        _B + _AWS_KEY_ID,
        "akia",
        "asia",
        "abia",
        "acca",
        "a3t",
    ),
    token("aws_key", r"ABSK[A-Za-z0-9+/]{100,300}", "absk"),
    token("aws_key", r"amzn\.mws\.[0-9a-f]{8}-[0-9a-f-]{27}", "amzn.mws."),
    token("aws_key", r"bedrock-api-key-[A-Za-z0-9+/=]{20,4000}", "bedrock-api-key-"),
    token("alibaba_key", _starting(r"LTAI") + r"[A-Za-z0-9]{20}", "ltai"),
    token("api_token", _starting(r"p8e-") + r"[A-Za-z0-9]{32}", "p8e-"),  # Adobe client secret
    token(
        "api_token", _starting("pat") + r"[A-Za-z0-9]{14}\.[a-f0-9]{64}", "pat"
    ),  # Airtable personal access token
    token("api_token", _starting(r"4b1d") + r"[A-Za-z0-9]{38}", "4b1d"),  # ClickHouse Cloud API secret
    token(  # Authress service client access key
        "api_token",
        _B + _AUTHRESS,
        "authress_",
        "sc_",
        "ext_",
        "scauth_",
    ),
    # Facebook access token: an app id, `|` (or its URL encoding), the app's secret
    token("api_token", _B + r"\d{15,16}(?:\||%7[Cc])[0-9A-Za-z_-]{27,40}", "|", "%7c"),
    rule(
        "api_token",
        _starting(r"s\.") + r"[A-Za-z0-9]{24}(?![A-Za-z0-9])",
        "s.",
        accept=lambda m: _mixed(m.group(0)),
    ),
    token("google_api_key", r"AIza[0-9A-Za-z_-]{35}", "aiza"),
    token("google_oauth_token", r"ya29\.[0-9A-Za-z_-]{20,400}", "ya29."),
    token("google_oauth_token", r"GOCSPX-[A-Za-z0-9_-]{20,40}", "gocspx-"),
    token("google_oauth_token", _B + r"1//0[A-Za-z0-9_-]{30,300}", "1//0"),
    token("azure_key", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}", "q~"),
    rule("azure_sas", r"(?i)[?&;]sig=([A-Za-z0-9%+/=]{16,200})", "sig=", group=1),
    token("api_token", r"(?:dop|doo|dor)_v1_[a-f0-9]{64}", "_v1_"),
    token("api_token", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", "v1.0-"),
    token("api_token", r"HRKU-AA[0-9a-zA-Z_-]{58}", "hrku-"),
    token("api_token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", "atlasv1"),
    token("api_token", r"hv[sb]\.[A-Za-z0-9_-]{24,300}", "hvs.", "hvb."),
    token("api_token", r"(?:fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,400})", "fo1_", "fm1", "fm2"),
    token("api_token", r"sha256~[\w-]{43}", "sha256~"),
    token("private_key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", "age-secret-key-1"),
    token(
        "api_token",
        r"tskey-(?:api|auth|client|scim|webhook)-[A-Za-z0-9_]{4,100}-[A-Za-z0-9_]{8,200}",
        "tskey-",
    ),
    token("api_token", r"castai_v1_[A-Za-z0-9]{64}_[A-Za-z0-9]{8}", "castai_v1_"),  # CAST AI
    token("api_token", r"sbp_[a-f0-9]{40}", "sbp_"),  # Supabase personal access token
    token("api_token", r"mdb_sa_sk_[A-Za-z0-9_-]{40}", "mdb_sa_sk_"),  # MongoDB Atlas service account
    # an Azure Data Factory self-hosted integration runtime's key: `IR@`, its id, names, the key's base64
    token("azure_key", r"IR@[0-9A-Za-z-]{36}@[^@\s]{0,200}@[0-9A-Za-z=-]{0,100}@[A-Za-z0-9+/=]{44}", "ir@"),
    token("api_token", r"sealed_env_[btued]_[0-9a-fA-F]{4}_[A-Za-z0-9_-]{20,500}", "sealed_env_"),
    token("api_token", r"usl_[A-Za-z0-9_-]{40,200}\.[A-Za-z0-9_-]{40,400}\.[A-Za-z0-9_-]{40,100}", "usl_"),
    # an Ansible vault's encrypted body: the hex lines after its header (also with escaped newlines)
    rule(
        "secret",
        r"\$ANSIBLE_VAULT;\d\.\d;AES256(?:;[A-Za-z0-9_.-]{0,60})?((?:(?:\r?\n|(?:\\r)?\\n)[0-9a-f]{2,80}){1,2000})",
        "$ansible_vault;",
        group=1,
        grow=True,
    ),
    # a Windows credential written in code or a scheduled task: `NetworkCredential("user", "password"...)`,
    # `schtasks ... /rp password`
    rule(
        "password",
        r"NetworkCredential\([ \t]{0,10}\\?[\"'][^\"'\\\r\n]{1,100}\\?[\"'][ \t]{0,10},[ \t]{0,10}\\?[\"']"
        r"([^\"'\\\r\n]{4,200})\\?[\"']",
        "networkcredential(",
        group=1,
    ),
    rule(
        "password",
        r"schtasks[^\r\n]{0,300}[ \t]/rp[ \t]+(\"[^\"\r\n]{1,200}\"|[^\s\"]{1,200})",
        "schtasks",
        group=1,
    ),
    # a base64 key in a .NET configuration's `value="...=="` (a storage key, a machine key)
    rule(
        "secret",
        r"value[ \t]?=[ \t]?\\?[\"']([A-Za-z0-9+/]{16,800}==)\\?[\"']",
        "value",
        group=1,
        accept=lambda m: _dense(m.group(1)),
    ),
    # a Django project's generated key, as `startproject` writes it
    token("secret", r"django-insecure-[a-z0-9!@#$%^&*()=+_-]{20,250}", "django-insecure-"),
    # a key hardcoded in a JWT library's call: `jwt.encode(claims, "key", ...)`, `jwt.decode(token, "key")`
    rule(
        "secret",
        r"jwt\.(?:en|de)code\((?:\{[^{}\r\n]{0,300}\}|[^,{}()\r\n]{1,200}),"
        r"[ \t]{0,10}\\?[\"']([^\"'\s\\]{8,200})\\?[\"']",
        "jwt.encode(",
        "jwt.decode(",
        group=1,
    ),
    # source hosting and package registries
    token(
        "github_token", r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,255}", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"
    ),
    token("github_token", r"github_pat_[A-Za-z0-9_]{22,255}", "github_pat_"),
    token(
        "gitlab_token",
        r"(?:glpat|gldt|glptt|glrt|glcbt|glimt|glagent|gloas|glsoat|glffct|glft)-[A-Za-z0-9_.-]{20,300}",
        "glpat-",
        "gldt-",
        "glptt-",
        "glrt-",
        "glcbt-",
        "glimt-",
        "glagent-",
        "gloas-",
        "glsoat-",
        "glffct-",
        "glft-",
    ),
    token("gitlab_token", r"GR1348941[A-Za-z0-9_-]{20}", "gr1348941"),
    token("npm_token", r"npm_[A-Za-z0-9]{36}", "npm_"),
    token("pypi_token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{20,1000}", "pypi-ageichlwas5vcmc"),
    token("api_token", r"rubygems_[a-f0-9]{48}", "rubygems_"),
    token("api_token", r"CLOJARS_[A-Za-z0-9]{60}", "clojars_"),  # any case, as gitleaks reads it
    token("api_token", r"(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})", "akcp", "cmvmd"),
    token("api_token", r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}", "sgp_"),
    token("api_token", r"sgp_[A-Za-z0-9]{64}", "sgp_"),  # Segment public API token
    token("api_token", _W + r"ct[opr]_[A-Za-z0-9]{30,248}", "cto_", "ctp_", "ctr_"),  # Chief Tools
    token("api_token", r"ATATT3[A-Za-z0-9_\-=]{180,200}", "atatt3"),
    # chat, mail and messaging
    token("slack_token", r"xox[abposrce]-[A-Za-z0-9-]{10,300}", "xox"),
    token("slack_token", r"xapp-\d-[A-Za-z0-9-]{10,300}", "xapp-"),
    token(
        "slack_token",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,200}",
        "hooks.slack.com",
    ),
    token("webhook_url", r"discord(?:app)?\.com/api/webhooks/\d{5,30}/[A-Za-z0-9_-]{20,200}", "discord"),
    token("webhook_url", r"webhook\.office\.com/webhookb2/[A-Za-z0-9@/-]{40,300}", "webhook.office.com"),
    token("webhook_url", r"hooks\.zapier\.com/hooks/catch/\d{1,20}/[A-Za-z0-9]{4,60}", "hooks.zapier.com"),
    # a Telegram bot's token (core.telegram.org/bots/api#authorizing-your-bot), alone or in the API's URL
    # (`/bot<token>/sendMessage`): the bot's id, `:`, 35 characters from `A` on, as gitleaks'
    # telegram-bot-api-token reads them (ids of 5 to 16 digits; `24197559:ASBe...` is its own example), and
    # only a generated secret (a number before a class's name is not one)
    rule(
        "api_token",
        r"(?<![0-9])[0-9]{5,16}:A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])",
        ":a",
        accept=lambda m: _generated_after_colon(m.group(0)),
    ),
    token("api_token", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", "sg."),
    token("api_token", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", "xkeysib-"),
    # Resend: two runs of base58
    token("api_token", _starting("re_") + r"[1-9A-HJ-NP-Za-km-z]{8}_[1-9A-HJ-NP-Za-km-z]{24}" + _E, "re_"),
    token("api_token", _B + r"(?:key|pubkey)-[0-9a-f]{32}", "key-"),
    token("api_token", _B + r"[0-9a-f]{32}-us\d{1,2}(?![0-9])", "-us"),
    token("api_token", _starting(r"SK") + r"[0-9a-fA-F]{32}(?![0-9A-Za-z])", "sk"),
    token("api_token", r"EAA[MC][A-Za-z0-9]{100,400}", "eaam", "eaac"),
    # payments and commerce
    token(
        "stripe_key",
        r"(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,250}",
        "sk_test_",
        "sk_live_",
        "rk_test_",
        "rk_live_",
        "_prod_",
    ),
    token("stripe_key", r"whsec_[A-Za-z0-9+/=]{20,100}", "whsec_"),
    # publishable keys (Stripe's, Paystack's): public in a browser, but gitleaks reads them and a log need not
    token("api_token", r"pk_(?:test|live)_[A-Za-z0-9]{10,250}", "pk_test_", "pk_live_"),
    # Chargebee's and Adyen's client keys: `test_`/`live_` and a generated run, not a test's name
    rule(
        "api_token",
        _W + r"(?:test|live)_[A-Za-z0-9]{30,40}" + _E,
        "test_",
        "live_",
        accept=lambda m: _generated(m.group(0)),
        grow=True,
    ),
    token("api_token", r"AQE[a-z0-9]{5,40}\.[A-Za-z0-9_=-]{50,80}", "aqe"),  # Adyen API key
    rule(  # Braintree tokenization key
        "api_token",
        _W + r"(?:production|sandbox)_[a-z0-9]{8}_[a-z0-9]{16}" + _E,
        "production_",
        "sandbox_",
        accept=lambda m: _generated(m.group(0)),
        grow=True,
    ),
    token(  # Mercado Pago: an access token, a public key
        "api_token",
        r"(?:APP_USR|TEST)-\d{10,16}-\d{6}-[a-f0-9]{32}-\d{6,12}|APP_USR-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "app_usr-",
        "test-",
    ),
    # Midtrans: a server key, a client key (`SB-` in the sandbox)
    token("api_token", r"(?:SB-)?Mid-(?:server|client)-[A-Za-z0-9]{18,28}", "mid-server-", "mid-client-"),
    token("api_token", r"rzp_(?:live|test)_[A-Za-z0-9]{14}", "rzp_"),  # Razorpay key id
    # Onfido: a live API token (a region after `api_live_`)
    token("api_token", r"api_live(?:_[A-Za-z]{2})?\.[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]{32}", "api_live"),
    token("api_token", r"(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_-]{22,60}", "eaaa", "sq0atp-", "sq0csp-"),
    token("api_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", "shpat_", "shpca_", "shppa_", "shpss_"),
    token("api_token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", "shippo_"),
    token("api_token", r"FLW(?:SECK|PUBK)_TEST-[a-hA-H0-9]{12,32}(?:-X)?", "flwseck", "flwpubk"),
    token("api_token", r"EZ[AT]K[A-Za-z0-9]{54}", "ezak", "eztk"),
    token("api_token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", "duffel_"),
    # developer platforms and observability
    # Doppler's every kind (its "Auth Token Formats"); a service token may name its config (`dp.st.dev.`)
    token(
        "api_token", r"dp\.(?:pt|ct|sa|said|scim|audit|st(?:\.[a-z0-9_-]{2,35})?)\.[A-Za-z0-9]{40,44}", "dp."
    ),
    token("api_token", _starting(r"dapi") + r"[a-f0-9]{32}(?:-\d)?", "dapi"),
    token("api_token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", "dt0c01."),
    token("api_token", r"(?:glc_[A-Za-z0-9+/]{32,400}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8})", "glc_", "glsa_"),
    token("api_token", r"eyJrIjoi[A-Za-z0-9]{70,400}", "eyjrijoi"),
    token("api_token", r"NR(?:AK|JS|II)-[A-Za-z0-9-]{19,32}", "nrak-", "nrjs-", "nrii-"),
    token("api_token", r"sntry[su]_[A-Za-z0-9+/=_]{40,300}", "sntrys_", "sntryu_"),
    token("api_token", r"lin_api_[A-Za-z0-9]{40}", "lin_api_"),
    token("api_token", _starting(r"API-") + r"[A-Z0-9]{26}", "api-"),
    token("api_token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64}", "pscale_"),
    token("api_token", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", "pmak-"),
    token("api_token", r"pnu_[A-Za-z0-9]{36}", "pnu_"),
    token("api_token", r"pul-[a-f0-9]{40}", "pul-"),
    token("api_token", r"rdme_[a-z0-9]{70}", "rdme_"),
    token("api_token", r"tk-us-[A-Za-z0-9_-]{48}", "tk-us-"),
    token("api_token", r"(?:ntn_|secret_)[A-Za-z0-9]{40,50}", "ntn_", "secret_"),
    token("api_token", r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", "pat.", "sat."),
    token("api_token", r"fio-u-[A-Za-z0-9_=-]{64}", "fio-u-"),
    token("api_token", r"tfp_[A-Za-z0-9_.=-]{59}", "tfp_"),
    token("api_token", r"ico-[a-zA-Z0-9]{32}", "ico-"),
    token("api_token", r"sm_(?:aat|pat|sat)_[a-zA-Z0-9]{16}", "sm_"),
    token("api_token", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk", "_mmk"),
    token("api_token", r"s-s4t2(?:ud|af)-[a-fA-F0-9]{64}", "s-s4t2"),
    token("api_token", r"ops_eyJ[A-Za-z0-9+/]{100,2000}", "ops_eyj"),
    token(
        "api_token",
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
        "a3-",
    ),
    token("api_token", r"sk\.eyJ[A-Za-z0-9_-]{50,400}\.[A-Za-z0-9_-]{20,100}", "sk.eyj"),
    # signed tokens
    token("jwt", r"eyJ[A-Za-z0-9_-]{8,2000}\.[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{0,2000}", "eyj"),
    token("jwt", r"ZXlK[A-Za-z0-9+/]{60,4000}", "zxlk"),
)

"""Vendor tokens, recognised by their format: the rule families of gitleaks' default configuration.

Each family is written here from the vendor's published token format (a prefix, an alphabet, a length); the
category names the family. Tokens without a recognisable format (a bare 40-character AWS secret, a
vendor's 32-character hex key) are caught by the name they are given instead (`pairs.py`, `keys.py`).
"""

from __future__ import annotations

import re

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
    # clouds
    token(
        "aws_key",
        _B + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}",
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
    token("api_token", r"\d{8,10}:AA[A-Za-z0-9_-]{33}", ":aa"),
    token("api_token", r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}", "sg."),
    token("api_token", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", "xkeysib-"),
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
    token("api_token", r"(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_-]{22,60}", "eaaa", "sq0atp-", "sq0csp-"),
    token("api_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", "shpat_", "shpca_", "shppa_", "shpss_"),
    token("api_token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", "shippo_"),
    token("api_token", r"FLW(?:SECK|PUBK)_TEST-[a-hA-H0-9]{12,32}(?:-X)?", "flwseck", "flwpubk"),
    token("api_token", r"EZ[AT]K[A-Za-z0-9]{54}", "ezak", "eztk"),
    token("api_token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", "duffel_"),
    # developer platforms and observability
    token("api_token", r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}", "dp."),
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

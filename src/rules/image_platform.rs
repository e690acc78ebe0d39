//! GD071: `check --image` of an image built for another CPU architecture. Its programs
//! cannot run on this host ("exec format error"); a multi-platform index that lacks this
//! host's platform is the same failure.

use super::{Outcome, Rule};
use crate::codes;
use crate::findings::{Finding, Severity};
use crate::snapshot::Snapshot;
use crate::subject::Subject;
use crate::subject::SubjectKind;

pub const RULE: Rule = Rule {
    name: "image_platform",
    codes: &[codes::GD071],
    views: &[],
    checks: "the image is built for this host's CPU architecture",
    judges: &[SubjectKind::Image],
    run,
};

fn run(snap: &Snapshot) -> Outcome {
    let Some(img) = &snap.image else {
        return Outcome::NotApplicable("no --image".into());
    };
    if img.matches_host {
        return Outcome::Checked(vec![]);
    }
    let platform = match &img.variant {
        Some(v) => format!("{}/{}/{v}", img.os, img.architecture),
        None => format!("{}/{}", img.os, img.architecture),
    };
    let host = snap
        .platform
        .as_ref()
        .and_then(|p| p.arch.get().cloned())
        .unwrap_or_else(|| "unknown".into());
    let host = host.as_str();
    let mut f = Finding::new(codes::GD071, Severity::Error, format!("The image is built for {platform}, not this host's {host}"))
        .detail(format!("Every program in the image is compiled for {platform}; on this {host} host the container fails at once with \"exec format error\". The findings about its userland describe files that cannot run here."))
        .evidence(Subject::Image, format!("{} ({platform})", img.path), "image configuration");
    if img.platforms.len() > 1 {
        f = f.evidence(
            Subject::Image,
            format!("the index offers {}", img.platforms.join(", ")),
            "image index",
        );
    }
    f = f
        .fix_text(format!("Build or pull the image for this host's platform (docker buildx build --platform linux/{}, or a multi-platform tag that includes it)", crate::image::oci_arch(host)))
        .fix_text("Emulation (qemu-user with binfmt_misc) runs CPU code only: CUDA does not work under it");
    Outcome::Checked(vec![f])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::*;

    #[test]
    fn an_image_for_another_architecture_cannot_start() {
        let mut s = healthy();
        assert_na(run(&s));
        s.image = Some(image_info("arm64", false));
        let f = only(run(&s), codes::GD071, Severity::Error);
        assert!(f.title.contains("linux/arm64"), "{}", f.title);
        assert!(f.detail.contains("exec format error"));
        s.image = Some(image_info("amd64", true));
        assert_clean(run(&s));
    }
}

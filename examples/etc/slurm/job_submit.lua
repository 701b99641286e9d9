-- /etc/slurm/job_submit.lua: production jobs land only on nodes nodegate
-- admitted (feature ng_admitted); the admission partition's jobs are the
-- only ones that may land on an unscreened node.
local admitted = "ng_admitted"

local function require_admitted(features)
	if features == nil or features == "" then
		return admitted
	end
	if string.find("&" .. features .. "&", "&" .. admitted .. "&", 1, true) then
		return features
	end
	return "(" .. features .. ")&" .. admitted
end

function slurm_job_submit(job_desc, part_list, submit_uid)
	if job_desc.partition ~= "admission" then
		job_desc.features = require_admitted(job_desc.features)
	end
	return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	if job_desc.features ~= nil and job_rec.partition ~= "admission" then
		job_desc.features = require_admitted(job_desc.features)
	end
	return slurm.SUCCESS
end
